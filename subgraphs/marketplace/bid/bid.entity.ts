import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Check, Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { Value } from '../tender/tender.types.js';
import { BidStatus } from './bid-status.js';

/**
 * A sealed bid of a vendor on a tender (or one of its lots). The row carries the vendor's account
 * and mode; who may read it is decided by BidService alone (bids are sealed while the tender is
 * active). At most one bid that is not withdrawn per tender, vendor and lot (a partial unique index).
 */
@ObjectType({ description: 'A sealed bid. Readable by its vendor; by the buyer only after the deadline.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'bid' })
@Index({ name: 'bid_tender_created_index', properties: ['tenderId', 'createdAt', 'id'] })
@Index({ name: 'bid_vendor_index', properties: ['vendorId', 'tenderId'] })
// One bid per vendor and lot (a tender without lots is one lot), withdrawn ones aside.
@Index({
  name: 'bid_one_per_vendor_lot',
  expression: `create unique index "bid_one_per_vendor_lot" on "marketplace"."bid" ("tender_id", "vendor_id", coalesce("lot_id", '00000000-0000-0000-0000-000000000000'::uuid)) where "status" <> 'withdrawn'`,
})
@Check({ name: 'bid_status_check', expression: "status in ('active', 'invalid', 'withdrawn', 'awarded', 'unsuccessful')" })
@Check({ name: 'bid_amount_check', expression: 'amount > 0' })
export class Bid {
  [OptionalProps]?: 'id' | 'createdAt' | 'updatedAt' | 'livemode' | 'status' | 'version' | 'value' | 'lotId';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  /** The vendor's account. */
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
  vendorId!: string;

  @Property({ type: 'decimal', precision: 18, scale: 2 })
  amount!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Field(() => [ID])
  @Property({ type: 'json' })
  documents!: string[];

  @Field(() => [String], { description: 'Answers to the quality criteria, in the order of the tender.' })
  @Property({ type: 'json' })
  qualityAnswers!: string[];

  @Field(() => BidStatus)
  @Property({ type: 'string', length: 16, default: 'active' })
  status: BidStatus = BidStatus.ACTIVE;

  /** The tender's termsVersion this bid was placed or last confirmed under. */
  @Field(() => Int)
  @Property({ type: 'integer' })
  termsVersion!: number;

  /** Raised by each amendment; every version has its receipt. */
  @Field(() => Int)
  @Property({ type: 'integer', default: 1 })
  version: number = 1;

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

  @Field(() => Value)
  get value(): Value {
    return { amount: Number(this.amount), currency: this.currency };
  }
}
