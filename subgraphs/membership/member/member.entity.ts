import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import { DateTimeResolver, LocalDateResolver } from 'graphql-scalars';
import type { Mode } from '../../shared/principal.js';
import { MemberStatus, memberStatusOn } from './member-status.js';

/**
 * A member of an account's organisation. Every row carries its account and mode, so test-mode
 * keys never see live data and the reverse.
 */
@ObjectType({ description: 'A member of the organisation.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'member' })
@Index({ name: 'member_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
@Index({
  name: 'member_scope_email_unique',
  expression:
    'create unique index "member_scope_email_unique" on "membership"."member" ("account_id", "mode", "email") where "deleted_at" is null',
})
export class Member {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'livemode' | 'status';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String)
  @Property({ type: 'string', length: 200 })
  name!: string;

  /** Stored lower-cased: one member per address and account, whatever its case. */
  @Field(() => String)
  @Property({ type: 'string', length: 320 })
  email!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 40, nullable: true })
  phone?: string | null;

  /** Calendar dates (YYYY-MM-DD): a membership period is a matter of days, not instants. */
  @Field(() => LocalDateResolver)
  @Property({ type: 'date' })
  joinedOn!: string;

  @Field(() => LocalDateResolver)
  @Property({ type: 'date' })
  periodStart!: string;

  @Field(() => LocalDateResolver)
  @Property({ type: 'date' })
  periodEnd!: string;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  /** Archived members leave every list; their finance records stay. */
  @Property({ type: 'datetime', nullable: true })
  deletedAt?: Date | null;

  @Field(() => Boolean, { description: 'True for live-mode data, false for test-mode (sandbox) data.' })
  get livemode(): boolean {
    return this.mode === 'live';
  }

  @Field(() => MemberStatus)
  get status(): MemberStatus {
    return memberStatusOn(this.periodEnd);
  }
}
