import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import { JSONObjectResolver } from 'graphql-scalars';
import { DateTimeResolver, LocalDateResolver } from '../../shared/scalars.js';
import type { Mode } from '../../../core/principal.js';
import { MemberStatus, memberStatusOf, type MemberState } from './member-status.js';
import { MEMBER_CHAT_ACCESS_TRIGGERS } from './chat-access-triggers.js';

/**
 * A member of an account's organisation. Every row carries its account and mode, so test-mode
 * keys never see live data and the reverse.
 */
@ObjectType({ description: 'A member of the organisation.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'member', triggers: MEMBER_CHAT_ACCESS_TRIGGERS })
@Index({ name: 'member_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
@Index({ name: 'member_scope_period_end_index', properties: ['accountId', 'mode', 'periodEnd'] })
@Index({ name: 'member_scope_category_index', properties: ['accountId', 'mode', 'categoryId', 'createdAt'] })
// The clock's sweeps run across accounts: current members by the day their period ends.
@Index({
  name: 'member_current_grace_end_index',
  expression: 'create index "member_current_grace_end_index" on "membership"."member" ("grace_ends_on") where "state" = \'current\' and "deleted_at" is null',
})
@Index({
  name: 'member_current_period_end_index',
  expression: 'create index "member_current_period_end_index" on "membership"."member" ("period_end") where "state" = \'current\' and "deleted_at" is null',
})
@Index({
  name: 'member_scope_email_unique',
  expression:
    'create unique index "member_scope_email_unique" on "membership"."member" ("account_id", "mode", "email") where "deleted_at" is null',
})
// Job matching ranks members by skill overlap and full-text relevance in one statement; these
// let it consider only members sharing a skill or a word with the posting.
@Index({ name: 'member_skills_index', expression: 'create index "member_skills_index" on "membership"."member" using gin ("skills")' })
@Index({
  name: 'member_headline_search_index',
  expression: `create index "member_headline_search_index" on "membership"."member" using gin (to_tsvector('english', coalesce("headline", '')))`,
})
export class Member {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'livemode' | 'status' | 'state' | 'skills' | 'location';

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

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 200, nullable: true })
  addressLine1?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 200, nullable: true })
  addressLine2?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 100, nullable: true })
  city?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 100, nullable: true })
  region?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 20, nullable: true })
  postalCode?: string | null;

  @Field(() => String, { nullable: true, description: 'ISO 3166-1 alpha-2 country code.' })
  @Property({ type: 'string', length: 2, nullable: true })
  country?: string | null;

  @Field(() => String, { nullable: true, description: 'A one-line professional summary, e.g. "Backend engineer, payments".' })
  @Property({ type: 'string', length: 200, nullable: true })
  headline?: string | null;

  /** Normalised (trimmed, lower-case, deduplicated) so job matching compares like with like. */
  @Field(() => [String], { description: 'Skills, lower-case and deduplicated.' })
  @Property({ type: 'text[]' })
  skills: string[] = [];

  @Field(() => JSONObjectResolver, { nullable: true, description: "The organisation's own fields: an object of strings, numbers and booleans." })
  @Property({ type: 'json', nullable: true })
  customFields?: Record<string, string | number | boolean | null> | null;

  /** No category: a free yearly membership, rolling from the join date, no grace days. */
  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  categoryId?: string | null;

  /** pending, current, suspended or cancelled; `status` adds the dates to it. */
  @Property({ type: 'string', length: 10 })
  state: MemberState = 'current';

  /** Calendar dates (YYYY-MM-DD): a membership period is a matter of days, not instants. */
  @Field(() => LocalDateResolver)
  @Property({ type: 'date' })
  joinedOn!: string;

  @Field(() => LocalDateResolver)
  @Property({ type: 'date' })
  periodStart!: string;

  @Field(() => LocalDateResolver, { nullable: true, description: 'Last day of the paid period; null for lifetime members.' })
  @Property({ type: 'date', nullable: true })
  periodEnd!: string | null;

  /** periodEnd plus the category's grace days: the last day of GRACE. Kept with every period change. */
  @Field(() => LocalDateResolver, { nullable: true, description: 'Last day of the grace period; null for lifetime members.' })
  @Property({ type: 'date', nullable: true })
  graceEndsOn!: string | null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime', onUpdate: () => new Date() })
  updatedAt: Date = new Date();

  /** The period end the member was last sent `member.renewal_due` for: one reminder per period (renewal-reminders.ts). */
  @Property({ type: 'date', nullable: true })
  renewalRemindedFor?: string | null;

  /** The grace end whose passing was announced as `member.lapsed` (lapse-notices.ts): one notice per lapse. */
  @Property({ type: 'date', nullable: true })
  lapseNotifiedFor?: string | null;

  /** Archived members leave every list; their finance records stay. */
  @Property({ type: 'datetime', nullable: true })
  deletedAt?: Date | null;

  @Field(() => String, { nullable: true, description: 'City, region and country, as far as known.' })
  get location(): string | null {
    const parts = [this.city, this.region, this.country].filter((part): part is string => !!part);
    return parts.length ? parts.join(', ') : null;
  }

  @Field(() => Boolean, { description: 'True for live-mode data, false for test-mode (sandbox) data.' })
  get livemode(): boolean {
    return this.mode === 'live';
  }

  @Field(() => MemberStatus)
  get status(): MemberStatus {
    return memberStatusOf(this);
  }
}
