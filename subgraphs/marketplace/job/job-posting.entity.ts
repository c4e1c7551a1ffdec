import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { EmploymentType, effectiveStatus, JobPostingStatus } from './job-posting-status.js';

/** A job posted on the account's job board by one of its members. */
@ObjectType({ description: 'A job posting on the job board.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'job_posting' })
@Index({ name: 'job_posting_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
// Matching considers only postings sharing a skill or a word with the member; both are indexed.
@Index({ name: 'job_posting_skills_index', expression: 'create index "job_posting_skills_index" on "marketplace"."job_posting" using gin ("skills")' })
@Index({
  name: 'job_posting_search_index',
  expression: `create index "job_posting_search_index" on "marketplace"."job_posting" using gin (to_tsvector('english', "title" || ' ' || "description"))`,
})
export class JobPosting {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode' | 'status' | 'state' | 'skills' | 'remote' | 'updatedAt';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String)
  @Property({ type: 'string', length: 200 })
  title!: string;

  @Field(() => String)
  @Property({ type: 'text' })
  description!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 200, nullable: true })
  location?: string | null;

  /** Normalised (lower-case, deduplicated), so matching compares like with like. */
  @Field(() => [String], { description: 'Skills asked for, lower-case and deduplicated.' })
  @Property({ type: 'text[]' })
  skills: string[] = [];

  @Field(() => Boolean)
  @Property({ type: 'boolean' })
  remote: boolean = false;

  @Field(() => EmploymentType, { nullable: true })
  @Property({ type: 'string', length: 16, nullable: true })
  employmentType?: EmploymentType | null;

  /** Yearly (or per the posting's terms) amounts in the currency's major unit. */
  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  salaryMin?: number | null;

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  salaryMax?: number | null;

  @Field(() => String, { nullable: true, description: 'ISO 4217, e.g. EUR; required with a salary.' })
  @Property({ type: 'string', length: 3, nullable: true })
  salaryCurrency?: string | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'When the posting stops taking applications, by itself.' })
  @Property({ type: 'datetime', nullable: true })
  closesAt?: Date | null;

  /** draft, open, closed or filled as last written; `status` applies the closing date to it. */
  @Property({ type: 'string', length: 8 })
  state: JobPostingStatus = JobPostingStatus.OPEN;

  @Field(() => JobPostingStatus)
  get status(): JobPostingStatus {
    return effectiveStatus(this.state, this.closesAt);
  }

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  /** The poster's Member id; the member itself lives in the membership subgraph. */
  @Property({ type: 'uuid' })
  postedById!: string;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => Boolean)
  get livemode(): boolean {
    return this.mode === 'live';
  }
}
