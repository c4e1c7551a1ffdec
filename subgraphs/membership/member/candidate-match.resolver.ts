import { Arg, Args, Ctx, Directive, FieldResolver, ID, Query, Resolver, Root } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { PageArgs } from '../../shared/page.args.js';
import { decodeMatchPage, encodeMatchPage } from '../../shared/match.types.js';
import { CandidateMatchPage } from './candidate-match.types.js';
import { CandidateMatchService } from './candidate-match.service.js';
import { MatchingJobType } from './matching-job.type.js';

/** MatchingJob.candidateMatches: this account's members ranked for a posting of the marketplace. */
@Resolver(() => MatchingJobType)
export class CandidateMatchResolver {
  /**
   * A posting as job matching sees it, by id: a reference the gateway completes from the
   * marketplace (null there when the posting is not the caller's). It also puts MatchingJob in
   * membership's schema, which nothing else here returns.
   */
  @Query(() => MatchingJobType, { nullable: true, description: 'A job posting as job matching sees it, by id; limit and after page its candidateMatches.' })
  matchingJob(@Arg('id', () => ID) id: string, @Args(() => PageArgs) page: PageArgs): Pick<MatchingJobType, 'id' | 'page'> {
    return { id, page: encodeMatchPage(page) };
  }

  @FieldResolver(() => CandidateMatchPage, { description: "The account's members ranked for this posting, best first, each score explained." })
  @Directive('@requires(fields: "title description skills location remote")')
  candidateMatches(
    @Root() posting: MatchingJobType,
    @Ctx() ctx: SubgraphContext,
  ): Promise<CandidateMatchPage> {
    return new CandidateMatchService(ctx.em, ctx.principal).rank(posting, decodeMatchPage(posting.page));
  }
}
