import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { JobPosting } from './job-posting.entity.js';
import type { CloseJobPostingArgs, CreateJobPostingArgs, JobPostingsArgs } from './job-posting.inputs.js';
import { LockMode } from '@mikro-orm/core';
import { DomainError } from '../../../core/errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { normalizeSkills } from '../../shared/match-score.js';
import { recordTransition } from '../audit/marketplace-audit.js';
import { IllegalPostingTransitionError } from '../application/job-application.errors.js';
import { effectiveStatus, JobPostingStatus } from './job-posting-status.js';

/** Job postings of the principal's account and mode. */
export class JobPostingService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  list(args: JobPostingsArgs): Promise<Page<JobPosting>> {
    return paginate(this.em, JobPosting, [this.scope], args);
  }

  async find(id: string): Promise<JobPosting | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(JobPosting, { id, ...this.scope });
  }

  /** Many postings in one statement, in the order of `ids` (null where not visible). */
  async findMany(ids: readonly string[]): Promise<(JobPosting | null)[]> {
    const valid = ids.filter((id) => UUID.test(id));
    const rows = valid.length ? await this.em.find(JobPosting, { id: { $in: valid }, ...this.scope }) : [];
    const byId = new Map(rows.map((posting) => [posting.id, posting]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** The postings of each poster in `posterIds` (newest first, at most 100 each), in one statement. */
  async byPosters(posterIds: readonly string[]): Promise<JobPosting[][]> {
    const valid = posterIds.filter((id) => UUID.test(id));
    const rows = valid.length
      ? await this.em.find(JobPosting, { postedById: { $in: valid }, ...this.scope }, { orderBy: { createdAt: 'desc', id: 'desc' } })
      : [];
    const byPoster = new Map<string, JobPosting[]>();
    for (const row of rows) {
      const list = byPoster.get(row.postedById) ?? [];
      if (list.length < 100) list.push(row);
      byPoster.set(row.postedById, list);
    }
    return posterIds.map((id) => byPoster.get(id) ?? []);
  }

  async create(args: CreateJobPostingArgs): Promise<JobPosting> {
    const state = args.status ?? JobPostingStatus.OPEN;
    if (state !== JobPostingStatus.OPEN && state !== JobPostingStatus.DRAFT) {
      throw new DomainError('BAD_USER_INPUT', 'A posting starts as draft or open', { param: 'status', reason: 'invalid_parameter' });
    }
    checkSalary(args);
    if (args.closesAt && args.closesAt.getTime() <= Date.now()) {
      throw new DomainError('BAD_USER_INPUT', 'closesAt must be in the future', { param: 'closesAt', reason: 'invalid_parameter' });
    }
    const now = new Date();
    const posting = this.em.create(JobPosting, {
      ...this.scope,
      title: args.title.trim(),
      description: args.description,
      location: args.location ?? null,
      postedById: args.postedBy,
      state,
      skills: normalizeSkills(args.skills),
      remote: args.remote ?? false,
      employmentType: args.employmentType ?? null,
      salaryMin: args.salaryMin ?? null,
      salaryMax: args.salaryMax ?? null,
      salaryCurrency: args.salaryCurrency?.toUpperCase() ?? null,
      closesAt: args.closesAt ?? null,
      createdAt: now,
      updatedAt: now,
    });
    recordTransition(this.em, { ...this.scope, actor: this.principal.keyId, subjectType: 'job_posting', subjectId: posting.id, from: null, to: state });
    await this.em.flush();
    return posting;
  }

  /** draft → open. */
  publish(id: string): Promise<JobPosting> {
    return this.transition(id, 'published', [JobPostingStatus.DRAFT], JobPostingStatus.OPEN, null);
  }

  /** draft or open → closed; an open posting past its closing date is closed already. */
  close(args: CloseJobPostingArgs): Promise<JobPosting> {
    return this.transition(args.id, 'closed', [JobPostingStatus.DRAFT, JobPostingStatus.OPEN], JobPostingStatus.CLOSED, args.reason ?? null);
  }

  private transition(id: string, verb: string, from: JobPostingStatus[], to: JobPostingStatus, reason: string | null): Promise<JobPosting> {
    return this.em.transactional(async (em) => {
      const posting = UUID.test(id) ? await em.findOne(JobPosting, { id, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true }) : null;
      if (!posting) throw new NotFoundError('job_posting', id);
      const status = effectiveStatus(posting.state, posting.closesAt);
      if (!from.includes(status)) throw new IllegalPostingTransitionError(verb, status);
      posting.state = to;
      recordTransition(em, { ...this.scope, actor: this.principal.keyId, subjectType: 'job_posting', subjectId: posting.id, from: status, to, reason });
      return posting;
    });
  }
}

function checkSalary(args: CreateJobPostingArgs): void {
  const hasSalary = args.salaryMin != null || args.salaryMax != null;
  if (hasSalary && !args.salaryCurrency) {
    throw new DomainError('BAD_USER_INPUT', 'salaryCurrency is required with a salary', { param: 'salaryCurrency', reason: 'invalid_parameter' });
  }
  if (args.salaryMin != null && args.salaryMax != null && args.salaryMin > args.salaryMax) {
    throw new DomainError('BAD_USER_INPUT', 'salaryMin must not exceed salaryMax', { param: 'salaryMin', reason: 'invalid_parameter' });
  }
}
