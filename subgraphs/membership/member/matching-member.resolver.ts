import { Args, FieldResolver, Resolver, Root } from '../../shared/type-graphql.js';
import { encodeMatchPage } from '../../shared/match.types.js';
import { PageArgs } from '../../shared/page.args.js';
import { Member } from './member.entity.js';
import { MatchingMemberType } from './matching-member.type.js';

/** Member.matchingProfile: the member as job matching sees it, where the marketplace adds jobMatches. */
@Resolver(() => Member)
export class MatchingMemberResolver {
  @FieldResolver(() => MatchingMemberType, { description: 'The member as job matching sees it; its jobMatches ranks open postings for the member (limit and after page that ranking).' })
  matchingProfile(@Root() member: Member, @Args(() => PageArgs) page: PageArgs): MatchingMemberType {
    return { id: member.id, page: encodeMatchPage(page), skills: member.skills, headline: member.headline ?? null, location: member.location, member };
  }
}
