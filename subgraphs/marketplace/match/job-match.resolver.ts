import { Args, Ctx, Directive, FieldResolver, Query, Resolver, Root } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { DomainError } from '../../shared/errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { UUID } from '../../shared/pagination.js';
import { JobPostingService } from '../job/job-posting.service.js';
import { MatchingMemberType } from './matching-member.type.js';
import { matchingJobOf } from './matching-job.type.js';
import { JobMatchesArgs } from './job-match.inputs.js';
import { decodeMatchPage, encodeMatchPage } from '../../shared/match.types.js';
import { JobMatchSubject } from './job-match-search.js';
import type { MatchingJobType } from './matching-job.type.js';
import { PostingMatchPage } from './posting-match.types.js';
import { PostingMatchService } from './posting-match.service.js';

@Resolver()
export class JobMatchResolver {
  @Query(() => JobMatchSubject, {
    description:
      'Explained job matching. memberId: the member, whose jobMatches ranks open postings for it; jobId: the posting, whose candidateMatches ranks members for it. Exactly one; limit and after page the ranking.',
  })
  async jobMatches(@Args(() => JobMatchesArgs) args: JobMatchesArgs, @Ctx() ctx: SubgraphContext): Promise<MatchingMemberType | MatchingJobType> {
    if (!args.memberId === !args.jobId) {
      throw new DomainError('BAD_USER_INPUT', 'Give exactly one of memberId and jobId', { param: args.memberId ? 'jobId' : 'memberId', reason: 'match_subject_required' });
    }
    if (args.memberId) {
      if (!UUID.test(args.memberId)) throw new DomainError('NOT_FOUND', `No member with id "${args.memberId}"`, { param: 'memberId', reason: 'member_not_found' });
      return { id: args.memberId.toLowerCase(), page: encodeMatchPage(args) };
    }
    // Only the posting's account (and mode) may rank members for it; others learn nothing.
    const job = await new JobPostingService(ctx.em, ctx.principal).find(args.jobId!);
    if (!job) throw new NotFoundError('job_posting', args.jobId!);
    return matchingJobOf(job, encodeMatchPage(args));
  }
}

/** MatchingMember.jobMatches: ranked here from the member's profile, which the gateway fetched by @requires. */
@Resolver(() => MatchingMemberType)
export class MemberJobMatchesResolver {
  @FieldResolver(() => PostingMatchPage, { description: 'Open postings ranked for this member, best first, each score explained.' })
  @Directive('@requires(fields: "skills headline location")')
  jobMatches(@Root() member: MatchingMemberType, @Ctx() ctx: SubgraphContext): Promise<PostingMatchPage> {
    return new PostingMatchService(ctx.em, ctx.principal).rank(member, decodeMatchPage(member.page));
  }
}
