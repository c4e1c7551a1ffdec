import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../shared/principal.js';

/** A job posted on the account's job board by one of its members. */
@ObjectType({ description: 'A job posting on the job board.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'job_posting' })
@Index({ name: 'job_posting_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
export class JobPosting {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode';

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
