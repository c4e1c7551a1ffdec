import { batchedReference } from '../../shared/reference.js';
import type { JobPosting } from './job-posting.entity.js';
import { JobPostingService } from './job-posting.service.js';

/** JobPosting references from other subgraphs, scoped to the caller's account and mode. */
export const jobPostingReference = batchedReference<JobPosting>('jobPosting.byId', (ctx, ids) =>
  new JobPostingService(ctx.em, ctx.principal).findMany(ids),
);
