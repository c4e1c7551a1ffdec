import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import type { PlatformPubSub } from '../../shared/pubsub.js';
import { DomainError } from '../../../core/errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { normalizeSkills } from '../../shared/match-score.js';
import { recordTransition } from '../audit/marketplace-audit.js';
import { JobPosting } from '../job/job-posting.entity.js';
import { effectiveStatus, JobPostingStatus } from '../job/job-posting-status.js';
import { candidateMember } from './candidate-member.js';
import { JobApplication } from './job-application.entity.js';
import { ApplicationNotActiveError, DuplicateApplicationError, InvalidCandidateError, PostingNotOpenError } from './job-application.errors.js';
import type { ApplyToJobArgs, HireJobApplicationArgs, JobApplicantsArgs, MoveJobApplicationArgs, RejectJobApplicationArgs } from './job-application.inputs.js';
import { JobApplicationStatus } from './job-application-status.js';
import { raiseWebhookEvent } from '../webhook/marketplace-webhook-outbox.js';
import { applicationStatusChange } from './application-webhook-data.js';

/** What subscribers of an application's status changes receive; published after the commit. */
export interface ApplicationStatusEvent {
  applicationId: string;
  memberId: string | null;
}

/** The pubsub topic of one account and mode's application changes. */
export function applicationTopic(principal: Pick<Principal, 'accountId' | 'mode'>): string {
  return `job-application:${principal.accountId}:${principal.mode}`;
}

/** `status.stage` as the trail records an application's position. */
const position = (application: Pick<JobApplication, 'status' | 'stage'>) => `${application.status}.${application.stage}`;

/** Applications to the principal's postings: apply, move through stages, reject, hire, withdraw. */
export class JobApplicationService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
    private readonly pubsub?: PlatformPubSub,
  ) {}

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  async find(id: string): Promise<JobApplication | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(JobApplication, { id, ...this.scope });
  }

  async findMany(ids: readonly string[]): Promise<(JobApplication | null)[]> {
    const valid = ids.filter((id) => UUID.test(id));
    const rows = valid.length ? await this.em.find(JobApplication, { id: { $in: valid }, ...this.scope }) : [];
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** A posting's applications, newest first; null when the posting is not the principal's (a 404, never a hint). */
  async applicants(args: JobApplicantsArgs): Promise<Page<JobApplication> | null> {
    if (!UUID.test(args.id)) return null;
    const posting = await this.em.findOne(JobPosting, { id: args.id, ...this.scope });
    if (!posting) return null;
    const where: Record<string, unknown>[] = [{ ...this.scope, jobPostingId: posting.id }];
    if (args.status) where.push({ status: args.status });
    if (args.stage) where.push({ stage: args.stage });
    return paginate(this.em, JobApplication, where, args);
  }

  async apply(args: ApplyToJobArgs): Promise<JobApplication> {
    const candidate = this.candidateOf(args);
    if (args.resumeDocumentId && args.resumeText) {
      throw new InvalidCandidateError('Give the resume as resumeDocumentId or as resumeText, not both', 'resumeText');
    }
    // Every key this person may already hold an active application under, and the one stored.
    let keys = [candidate.key];
    try {
      const application = await this.em.transactional(async (em) => {
        // The lock orders applications against a concurrent close or fill of the same posting.
        const posting = UUID.test(args.id)
          ? await em.findOne(JobPosting, { id: args.id, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true })
          : null;
        if (!posting) throw new NotFoundError('job_posting', args.id);
        const status = effectiveStatus(posting.state, posting.closesAt);
        if (status !== JobPostingStatus.OPEN) throw new PostingNotOpenError(status);
        // One person, one active application: an outside candidate with a member's email is that
        // member (key: the member id), and a member's email may name an application made before
        // the address became a member's. Applications to one posting queue on its row lock.
        const member = await candidateMember(em, this.scope, candidate);
        const key = member?.id ?? candidate.key;
        keys = [...new Set([key, candidate.key, ...(member ? [member.email] : [])])];
        const existing = await em.findOne(JobApplication, { ...this.scope, jobPostingId: posting.id, candidateKey: { $in: keys }, status: JobApplicationStatus.ACTIVE });
        if (existing) throw new DuplicateApplicationError(existing.id);
        const now = new Date();
        const created = em.create(JobApplication, {
          ...this.scope,
          jobPostingId: posting.id,
          memberId: candidate.memberId,
          candidateName: candidate.name,
          candidateEmail: candidate.email,
          candidateKey: key,
          coverLetter: args.coverLetter ?? null,
          answers: (args.answers ?? []).map(({ question, answer }) => ({ question, answer })),
          resumeDocumentId: args.resumeDocumentId ?? null,
          resumeText: args.resumeText ?? null,
          skills: normalizeSkills(args.skills),
          createdAt: now,
          updatedAt: now,
        });
        this.audit(em, created.id, null, position(created));
        raiseWebhookEvent(em, this.scope, 'application.status_changed', applicationStatusChange(created, null));
        return created;
      });
      this.publish(application);
      return application;
    } catch (error) {
      // Two applications racing past the check above: the partial unique index lets one in.
      if (error instanceof UniqueConstraintViolationException) {
        const existing = await this.em.fork().findOne(JobApplication, { ...this.scope, jobPostingId: args.id, candidateKey: { $in: keys }, status: JobApplicationStatus.ACTIVE });
        if (existing) throw new DuplicateApplicationError(existing.id);
      }
      throw error;
    }
  }

  move(args: MoveJobApplicationArgs): Promise<JobApplication> {
    return this.change(args.id, (application) => {
      if (application.stage === args.stage) throw new DomainError('CONFLICT', `The application is already at ${args.stage}`, { param: 'stage', reason: 'application_stage_unchanged' });
      application.stage = args.stage;
      return null;
    });
  }

  reject(args: RejectJobApplicationArgs): Promise<JobApplication> {
    return this.change(args.id, (application) => {
      application.status = JobApplicationStatus.REJECTED;
      application.rejectionReason = args.reason;
      return args.reason;
    });
  }

  withdraw(id: string): Promise<JobApplication> {
    return this.change(id, (application) => {
      application.status = JobApplicationStatus.WITHDRAWN;
      return null;
    });
  }

  /** Hires the candidate; with `fillPosting` the posting becomes filled in the same transaction. */
  hire(args: HireJobApplicationArgs): Promise<JobApplication> {
    return this.change(args.id, async (application, em) => {
      application.status = JobApplicationStatus.HIRED;
      if (args.fillPosting) {
        const posting = await em.findOneOrFail(JobPosting, { id: application.jobPostingId, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
        if (posting.state !== JobPostingStatus.FILLED) {
          const from = effectiveStatus(posting.state, posting.closesAt);
          posting.state = JobPostingStatus.FILLED;
          recordTransition(em, { ...this.scope, actor: this.principal.keyId, subjectType: 'job_posting', subjectId: posting.id, from, to: JobPostingStatus.FILLED, reason: `hired application ${application.id}` });
        }
      }
      return null;
    });
  }

  /** Locks an active application, applies `mutate`, and records the move in the same transaction. */
  private async change(
    id: string,
    mutate: (application: JobApplication, em: EntityManager) => string | null | Promise<string | null>,
  ): Promise<JobApplication> {
    const application = await this.em.transactional(async (em) => {
      const found = UUID.test(id) ? await em.findOne(JobApplication, { id, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true }) : null;
      if (!found) throw new NotFoundError('job_application', id);
      if (found.status !== JobApplicationStatus.ACTIVE) throw new ApplicationNotActiveError(found.status);
      const from = position(found);
      const before = { status: found.status, stage: found.stage };
      const reason = await mutate(found, em);
      found.updatedAt = new Date();
      this.audit(em, found.id, from, position(found), reason);
      raiseWebhookEvent(em, this.scope, 'application.status_changed', applicationStatusChange(found, before));
      return found;
    });
    this.publish(application);
    return application;
  }

  private audit(em: EntityManager, id: string, from: string | null, to: string, reason?: string | null): void {
    recordTransition(em, { ...this.scope, actor: this.principal.keyId, subjectType: 'job_application', subjectId: id, from, to, reason });
  }

  private publish(application: JobApplication): void {
    const event: ApplicationStatusEvent = { applicationId: application.id, memberId: application.memberId ?? null };
    this.pubsub?.publish(applicationTopic(this.principal), event);
  }

  private candidateOf(args: ApplyToJobArgs): { memberId: string | null; name: string | null; email: string | null; key: string } {
    if (args.memberId) {
      if (args.name || args.email) throw new InvalidCandidateError('Give memberId, or name and email for an outside candidate, not both', 'memberId');
      return { memberId: args.memberId.toLowerCase(), name: null, email: null, key: args.memberId.toLowerCase() };
    }
    if (!args.name?.trim()) throw new InvalidCandidateError('name is required for a candidate who is not a member (or give memberId)', 'name');
    if (!args.email) throw new InvalidCandidateError('email is required for a candidate who is not a member (or give memberId)', 'email');
    const email = args.email.trim().toLowerCase();
    return { memberId: null, name: args.name.trim(), email, key: email };
  }
}

