import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { CategoryPeriod, DEFAULT_RENEWAL_WINDOW_DAYS, monthsOf, RenewalBasis, type PeriodRule } from './category-period.js';

/**
 * A kind of membership with its fee, period and renewal rules. Its period and renewal basis are
 * fixed once made (members' periods follow them); name, fee, grace and renewal window may change.
 */
@ObjectType({ description: 'A membership category: fee, period, renewal basis and grace days.' })
@Entity({ tableName: 'member_category' })
@Unique({ name: 'member_category_scope_name_unique', properties: ['accountId', 'mode', 'name'] })
@Index({ name: 'member_category_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
export class MemberCategory {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode' | 'periodRule' | 'renewalWindowDays';

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

  @Field(() => Int, { description: 'The fee per period in minor units of the currency (cents).' })
  @Property({ type: 'integer' })
  feeAmount!: number;

  @Field(() => String, { description: 'ISO 4217 code, upper case.' })
  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Field(() => CategoryPeriod)
  @Property({ type: 'string', length: 16 })
  period!: CategoryPeriod;

  @Field(() => Int, { nullable: true, description: 'Years per period when period is EVERY_N_YEARS.' })
  @Property({ type: 'integer', nullable: true })
  periodYears?: number | null;

  @Field(() => RenewalBasis)
  @Property({ type: 'string', length: 8 })
  renewalBasis!: RenewalBasis;

  @Field(() => Int, { nullable: true, description: 'FIXED basis: month (1-12) of the fixed date.' })
  @Property({ type: 'smallint', nullable: true })
  fixedMonth?: number | null;

  @Field(() => Int, { nullable: true, description: 'FIXED basis: day (1-28) of the fixed date.' })
  @Property({ type: 'smallint', nullable: true })
  fixedDay?: number | null;

  @Field(() => Int, { description: 'Days after the period end during which the member is in GRACE before LAPSED.' })
  @Property({ type: 'integer' })
  graceDays!: number;

  /** Wild Apricot's "renew only within N days before the renewal date": a renewal earlier than this is refused. */
  @Field(() => Int, { description: 'Days before the period end from which an ACTIVE member may renew (GRACE and LAPSED members may renew at any time).' })
  @Property({ type: 'integer', default: 30 })
  renewalWindowDays: number = DEFAULT_RENEWAL_WINDOW_DAYS;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => Boolean)
  get livemode(): boolean {
    return this.mode === 'live';
  }

  get periodRule(): PeriodRule {
    return {
      months: monthsOf(this.period, this.periodYears ?? null),
      anchor: this.renewalBasis === RenewalBasis.FIXED ? { month: this.fixedMonth!, day: this.fixedDay! } : null,
    };
  }
}
