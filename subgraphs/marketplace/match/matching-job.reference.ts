import { batchedReference } from '../../shared/reference.js';
import { JobPostingService } from '../job/job-posting.service.js';
import { matchingJobOf, type MatchingJobType } from './matching-job.type.js';

/** MatchingJob references, scoped to the caller's account and mode. */
export const matchingJobReference = batchedReference<MatchingJobType>('matchingJob.byId', async (ctx, ids) =>
  (await new JobPostingService(ctx.em, ctx.principal).findMany(ids)).map((posting) => posting && matchingJobOf(posting)),
);
