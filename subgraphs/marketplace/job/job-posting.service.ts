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
