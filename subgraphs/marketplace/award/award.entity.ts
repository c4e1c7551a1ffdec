import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Check, Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, Float, ID, Int, ObjectType, registerEnumType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { Value } from '../tender/tender.types.js';

export enum AwardStatus {
  PENDING = 'pending',
  ACTIVE = 'active',
  CANCELLED = 'cancelled',
}

registerEnumType(AwardStatus, {
  name: 'AwardStatus',
  valuesConfig: {
    PENDING: { description: 'Proposed to the next best bid after an award was cancelled; the buyer confirms it with awardTender.' },
    ACTIVE: { description: 'Made by the buyer.' },
    CANCELLED: { description: 'Cancelled before the tender completed, with a reason.' },
  },
});

/** How one bid ranked when its lot was awarded. */
@ObjectType({ description: 'The score of one bid in an award decision (ratedCriteria), or its price rank (priceOnly).' })
export class BidScore {
  @Field(() => ID)
  bidId!: string;

  @Field(() => Int)
  rank!: number;

  @Field(() => Float)
  amount!: number;

  @Field(() => Float, { nullable: true, description: 'lowest / amount × priceWeight (ratedCriteria).' })
  priceScore!: number | null;

  @Field(() => Float, { nullable: true, description: "The buyer's quality score (0-100) × qualityWeight / 100 (ratedCriteria)." })
  qualityScore!: number | null;

  @Field(() => Float, { nullable: true })
  total!: number | null;
}

/** The award of a tender's lot (or of the whole tender without lots) to one bid, published with its value and scores. */
@ObjectType({ description: 'An award: the bid chosen for a lot, its value, and the scores that decided it.' })
@Entity({ tableName: 'award' })
@Index({ name: 'award_tender_index', properties: ['tenderId', 'createdAt'] })
// One live award per lot (a tender without lots is one lot).
@Index({
  name: 'award_one_per_lot',
  expression: `create unique index "award_one_per_lot" on "marketplace"."award" ("tender_id", coalesce("lot_id", '00000000-0000-0000-0000-000000000000'::uuid)) where "status" <> 'cancelled'`,
})
@Check({ name: 'award_status_check', expression: "status in ('pending', 'active', 'cancelled')" })
export class Award {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'cancellationReason' | 'value' | 'lotId';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** The buyer's account. */
  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  tenderId!: string;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  lotId?: string | null;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  bidId!: string;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  vendorId!: string;

  @Property({ type: 'decimal', precision: 18, scale: 2 })
  amount!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Field(() => AwardStatus)
  @Property({ type: 'string', length: 16 })
  status!: AwardStatus;

  /** The whole ranking of the lot's valid bids at the decision, kept so a cancellation can fall to the next best. */
  @Field(() => [BidScore])
  @Property({ type: 'json' })
  scores!: BidScore[];

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  cancellationReason?: string | null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  updatedAt: Date = new Date();

  @Field(() => Value)
  get value(): Value {
    return { amount: Number(this.amount), currency: this.currency };
  }
}
