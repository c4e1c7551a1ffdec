import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../shared/principal.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import { JobPosting } from './job-posting.entity.js';
import type { CreateJobPostingArgs, JobPostingsArgs } from './job-posting.inputs.js';

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
    const posting = this.em.create(JobPosting, {
      ...this.scope,
      title: args.title.trim(),
      description: args.description,
      location: args.location ?? null,
      postedById: args.postedBy,
    });
    await this.em.flush();
    return posting;
  }
}
