import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { JobApplicationStage, JobApplicationStatus } from './job-application-status.js';
import { ApplicationAnswer } from './application-answer.js';

/**
 * A candidate's application to a job posting: a member of the account (memberId) or an outside
 * candidate (name and email). `candidateKey` (the member id, or the lower-cased email) carries
 * the rule "one active application per candidate and posting" as a partial unique index.
 */
@ObjectType({ description: 'An application to a job posting.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'job_application' })
@Index({ name: 'job_application_posting_index', properties: ['accountId', 'mode', 'jobPostingId', 'createdAt', 'id'] })
@Index({
  name: 'job_application_active_candidate_unique',
  expression:
    `create unique index "job_application_active_candidate_unique" on "marketplace"."job_application" ("account_id", "mode", "job_posting_id", "candidate_key") where "status" = 'active'`,
})
export class JobApplication {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'status' | 'stage' | 'livemode' | 'skills' | 'answers';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Property({ type: 'uuid' })
  jobPostingId!: string;

  /** A Member id of the membership subgraph, or null for an outside candidate. */
  @Property({ type: 'uuid', nullable: true })
  memberId?: string | null;

  @Field(() => String, { nullable: true, description: "An outside candidate's name." })
  @Property({ type: 'string', length: 200, nullable: true })
  candidateName?: string | null;

  @Field(() => String, { nullable: true, description: "An outside candidate's email, lower-cased." })
  @Property({ type: 'string', length: 320, nullable: true })
  candidateEmail?: string | null;

  @Property({ type: 'string', length: 320 })
  candidateKey!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  coverLetter?: string | null;

  @Field(() => [ApplicationAnswer])
  @Property({ type: 'json' })
  answers: ApplicationAnswer[] = [];

  @Field(() => ID, { nullable: true, description: 'A document of the membership subgraph holding the resume.' })
  @Property({ type: 'uuid', nullable: true })
  resumeDocumentId?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  resumeText?: string | null;

  @Field(() => [String], { description: 'Skills the candidate declared, lower-case and deduplicated.' })
  @Property({ type: 'text[]' })
  skills: string[] = [];

  @Field(() => JobApplicationStatus)
  @Property({ type: 'string', length: 10 })
  status: JobApplicationStatus = JobApplicationStatus.ACTIVE;

  @Field(() => JobApplicationStage, { description: 'The last stage reached while active.' })
  @Property({ type: 'string', length: 10 })
  stage: JobApplicationStage = JobApplicationStage.APPLIED;

  @Field(() => String, { nullable: true, description: 'Why the application was rejected.' })
  @Property({ type: 'text', nullable: true })
  rejectionReason?: string | null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  updatedAt: Date = new Date();

  @Field(() => Boolean)
  get livemode(): boolean {
    return this.mode === 'live';
  }
}
