import { Ctx, Directive, FieldResolver, Resolver, Root } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { decodeMatchPage } from '../../shared/match.types.js';
import { MatchingMemberType } from './matching-member.type.js';
import { PostingMatchPage } from './posting-match.types.js';
import { PostingMatchService } from './posting-match.service.js';

/** MatchingMember.jobMatches: ranked here from the member's profile, which the gateway fetched by @requires. */
@Resolver(() => MatchingMemberType)
export class MemberJobMatchesResolver {
  @FieldResolver(() => PostingMatchPage, { description: 'Open postings ranked for this member, best first, each score explained.' })
  @Directive('@requires(fields: "skills headline location")')
  jobMatches(@Root() member: MatchingMemberType, @Ctx() ctx: SubgraphContext): Promise<PostingMatchPage> {
    return new PostingMatchService(ctx.em, ctx.principal).rank(member, decodeMatchPage(member.page));
  }
}
