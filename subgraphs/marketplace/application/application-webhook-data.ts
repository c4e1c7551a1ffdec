import type { JobApplication } from './job-application.entity.js';

/**
 * `application.status_changed` as deliveries carry it: the application (GraphQL field names, enum
 * values upper case) and where it was before (null for a new application).
 */
export function applicationStatusChange(application: JobApplication, before: { status: string; stage: string } | null): Record<string, unknown> {
  const position = (p: { status: string; stage: string }) => ({ status: p.status.toUpperCase(), stage: p.stage.toUpperCase() });
  return {
    application: {
      id: application.id,
      jobPostingId: application.jobPostingId,
      memberId: application.memberId ?? null,
      candidateName: application.candidateName ?? null,
      candidateEmail: application.candidateEmail ?? null,
      ...position(application),
      rejectionReason: application.rejectionReason ?? null,
      updatedAt: application.updatedAt.toISOString(),
    },
    from: before ? position(before) : null,
  };
}
