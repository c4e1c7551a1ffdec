import { batchedReference } from '../../shared/reference.js';
import { JobPostingService } from '../job/job-posting.service.js';
import type { SubgraphContext } from '../../shared/context.js';
import type { JobPosting } from '../job/job-posting.entity.js';
import { matchingJobOf, type MatchingJobType } from './matching-job.type.js';

/** MatchingJob references, scoped to the caller's account and mode. */
const postings = batchedReference<JobPosting>('jobPosting.byId', (ctx, ids) => new JobPostingService(ctx.em, ctx.principal).findMany(ids));

export const matchingJobReference = {
  async __resolveReference(reference: { id: string; page: string }, ctx: SubgraphContext): Promise<MatchingJobType | null> {
    const posting = await postings.__resolveReference(reference, ctx);
    return posting && matchingJobOf(posting, reference.page);
  },
};
