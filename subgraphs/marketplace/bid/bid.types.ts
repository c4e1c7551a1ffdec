import { Field, Int, ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { BidReceipt } from './bid-receipt.entity.js';
import { Bid } from './bid.entity.js';

@ObjectType({ description: 'A bid version and its receipt.' })
export class BidWithReceipt {
  @Field(() => Bid)
  bid!: Bid;

  @Field(() => BidReceipt)
  receipt!: BidReceipt;
}

@ObjectType()
export class BidPage extends PageOf(Bid) {}

@ObjectType({ description: 'A receipt checked again: its hash recomputed from the stored content.' })
export class BidReceiptVerification {
  @Field(() => BidReceipt)
  receipt!: BidReceipt;

  @Field(() => String, { description: 'SHA-256 recomputed now from the stored canonical content.' })
  recomputedSha256!: string;

  @Field(() => Boolean, { description: 'The stored hash equals the recomputed one (and the given sha256, when given).' })
  valid!: boolean;

  @Field(() => Boolean, { description: "This receipt's content equals the bid as stored now (false for an amended or withdrawn bid's older versions)." })
  matchesCurrentBid!: boolean;
}

@ObjectType({ description: "A tender's bid count: how many bids are placed and not withdrawn. No amount, vendor or document." })
export class TenderBidCount {
  @Field(() => String)
  tenderId!: string;

  @Field(() => Int)
  count!: number;
}
