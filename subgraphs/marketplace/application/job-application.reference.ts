import { batchedReference } from '../../shared/reference.js';
import type { JobApplication } from './job-application.entity.js';
import { JobApplicationService } from './job-application.service.js';

/** JobApplication references, scoped to the caller's account and mode. */
export const jobApplicationReference = batchedReference<JobApplication>('jobApplication.byId', (ctx, ids) =>
  new JobApplicationService(ctx.em, ctx.principal).findMany(ids),
);
