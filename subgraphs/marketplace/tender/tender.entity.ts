import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Check, Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { AwardCriteria, ProcurementMethod, TenderStatus } from './tender-status.js';
import { CriteriaWeights, Period, TenderLot, Value, type StoredLot } from './tender.types.js';

/**
 * A request for proposals (OCDS `tender`) by the buyer account. `status` is what is stored; an
 * active tender past `tenderPeriodEnd` by the database clock is settled (evaluation or
 * unsuccessful) by the first read or write that touches it, so no timer is involved.
 */
@ObjectType({ description: 'A tender (request for proposals) with sealed bids.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'tender' })
@Index({ name: 'tender_mode_created_index', properties: ['mode', 'createdAt', 'id'] })
// Settling finds a mode's expired active tenders by their deadline.
@Index({ name: 'tender_active_end_index', expression: `create index "tender_active_end_index" on "marketplace"."tender" ("mode", "tender_period_end") where "status" = 'active'` })
@Check({ name: 'tender_status_check', expression: "status in ('draft', 'active', 'evaluation', 'awarded', 'complete', 'cancelled', 'unsuccessful')" })
@Check({ name: 'tender_value_check', expression: 'value_amount > 0' })
export class Tender {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'livemode' | 'termsVersion' | 'status' | 'cancellationReason' | 'awardPeriodStart' | 'awardPeriodEnd' | 'value' | 'tenderPeriod' | 'awardPeriod' | 'weights' | 'lotList' | 'documents' | 'bidCount';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** The buyer. */
  @Field(() => ID, { description: 'The buyer: the account that published the tender.' })
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

  @Property({ type: 'decimal', precision: 18, scale: 2 })
  valueAmount!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Field(() => ProcurementMethod)
  @Property({ type: 'string', length: 16 })
  procurementMethod!: ProcurementMethod;

  @Field(() => AwardCriteria)
  @Property({ type: 'string', length: 16 })
  awardCriteria!: AwardCriteria;

  @Property({ type: 'smallint', nullable: true })
  priceWeight?: number | null;

  @Property({ type: 'smallint', nullable: true })
  qualityWeight?: number | null;

  @Property({ type: 'json' })
  lots!: StoredLot[];

  @Property({ type: 'datetime' })
  tenderPeriodStart!: Date;

  @Property({ type: 'datetime' })
  tenderPeriodEnd!: Date;

  @Property({ type: 'datetime', nullable: true })
  awardPeriodStart?: Date | null;

  @Property({ type: 'datetime', nullable: true })
  awardPeriodEnd?: Date | null;

  /** Document ids (the membership documents); a change of terms like any other. */
  @Property({ type: 'json' })
  documentIds!: string[];

  /** Vendor ids invited to a selective tender. */
  @Property({ type: 'json' })
  invitedVendorIds!: string[];

  @Field(() => TenderStatus)
  @Property({ type: 'string', length: 16, default: 'draft' })
  status: TenderStatus = TenderStatus.DRAFT;

  /** Raised by every change of terms while active: bids placed under an older version are invalid until confirmed. */
  @Field(() => Int, { description: 'Raised by each change of terms while active; bids placed under an older version must be confirmed again.' })
  @Property({ type: 'integer', default: 1 })
  termsVersion: number = 1;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  cancellationReason?: string | null;

  @Property({ type: 'string', length: 100 })
  createdBy!: string;

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

  @Field(() => Value, { description: 'The budget: no bid may exceed it (nor a lot its own value).' })
  get value(): Value {
    return { amount: Number(this.valueAmount), currency: this.currency };
  }

  @Field(() => Period, { description: 'When bids are taken: from publication until endDate (the deadline).' })
  get tenderPeriod(): Period {
    return { startDate: this.tenderPeriodStart, endDate: this.tenderPeriodEnd };
  }

  @Field(() => Period, { nullable: true })
  get awardPeriod(): Period | null {
    return this.awardPeriodStart || this.awardPeriodEnd ? { startDate: this.awardPeriodStart ?? null, endDate: this.awardPeriodEnd ?? null } : null;
  }

  @Field(() => CriteriaWeights, { nullable: true, description: 'The weights of ratedCriteria; null for priceOnly.' })
  get weights(): CriteriaWeights | null {
    return this.awardCriteria === AwardCriteria.RATED_CRITERIA ? { price: this.priceWeight ?? 0, quality: this.qualityWeight ?? 0 } : null;
  }

  @Field(() => [TenderLot], { name: 'lots' })
  get lotList(): TenderLot[] {
    return this.lots.map((lot) => ({ id: lot.id, title: lot.title, description: lot.description, value: { amount: Number(lot.amount), currency: this.currency } }));
  }

  @Field(() => [ID], { description: 'Document ids (documents of the membership API).' })
  get documents(): string[] {
    return this.documentIds;
  }
}
