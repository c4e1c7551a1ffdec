import { Args, Ctx, Query, Resolver } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { DomainError } from '../../../core/errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { UUID } from '../../shared/pagination.js';
import { JobPostingService } from '../job/job-posting.service.js';
import type { MatchingMemberType } from './matching-member.type.js';
import { matchingJobOf } from './matching-job.type.js';
import { JobMatchesArgs } from './job-match.inputs.js';
import { encodeMatchPage } from '../../shared/match.types.js';
import { JobMatchSubject } from './job-match-search.js';
import type { MatchingJobType } from './matching-job.type.js';

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
