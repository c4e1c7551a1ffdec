import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from '../../shared/type-graphql.js';
import DataLoader from 'dataloader';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { BidReceipt } from './bid-receipt.entity.js';
import { Bid } from './bid.entity.js';
import { AmendBidArgs, BidReceiptArgs, PlaceBidArgs, TenderBidsArgs } from './bid.inputs.js';
import { BidService } from './bid.service.js';
import { BidPage, BidReceiptVerification, BidWithReceipt, TenderBidCount } from './bid.types.js';
import { tenderBidCountStream } from './tender-bid-count.js';

const service = (ctx: SubgraphContext) => new BidService(ctx.em, ctx.principal, ctx.pubsub);

@Resolver(() => Bid)
export class BidResolver {
  @Query(() => BidPage, {
    description: "A tender's bids. Sealed: while ACTIVE the buyer gets FORBIDDEN bids_sealed and a vendor its own bids only; after the deadline the buyer sees all, a vendor still its own.",
  })
  tenderBids(@Args(() => TenderBidsArgs) args: TenderBidsArgs, @Ctx() ctx: SubgraphContext): Promise<BidPage> {
    return service(ctx).list(args);
  }

  @Query(() => Bid, { nullable: true, description: 'A bid the caller may see (its own; the buyer once the tender period is over).' })
  bid(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Bid | null> {
    return service(ctx).find(id);
  }

  @Query(() => BidReceiptVerification, { nullable: true, description: 'Checks a receipt: its SHA-256 recomputed from the stored content, against the given hash.' })
  bidReceipt(@Args(() => BidReceiptArgs) args: BidReceiptArgs, @Ctx() ctx: SubgraphContext): Promise<BidReceiptVerification | null> {
    return service(ctx).verifyReceipt(args);
  }

  @Mutation(() => BidWithReceipt, { description: "Places the caller's vendor's sealed bid (approved vendors, within the tender period); answers its receipt." })
  placeBid(@Args(() => PlaceBidArgs) args: PlaceBidArgs, @Ctx() ctx: SubgraphContext): Promise<BidWithReceipt> {
    return service(ctx).place(args);
  }

  @Mutation(() => BidWithReceipt, { description: 'Amends the bid within the tender period: a new version with a new receipt (older receipts stay).' })
  amendBid(@Args(() => AmendBidArgs) args: AmendBidArgs, @Ctx() ctx: SubgraphContext): Promise<BidWithReceipt> {
    return service(ctx).amend(args);
  }

  @Mutation(() => Bid, { description: 'Withdraws the bid within the tender period.' })
  withdrawBid(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Bid> {
    return service(ctx).withdraw(id);
  }

  @Mutation(() => Bid, { description: 'Confirms an INVALID bid (the terms changed) under the current terms, before the deadline.' })
  confirmBid(@Arg('id', () => ID) id: string, @Ctx() ctx: SubgraphContext): Promise<Bid> {
    return service(ctx).confirm(id);
  }

  @Subscription(() => TenderBidCount, {
    description: "The buyer's tender bid count: the current count, then one event per bid placed or withdrawn. Counts only.",
    subscribe: ({ args, context }) => tenderBidCountStream((args as { tenderId: string }).tenderId, context as SubgraphContext),
  })
  tenderBidCount(@Root() count: TenderBidCount, @Arg('tenderId', () => ID) _tenderId: string): TenderBidCount {
    return count;
  }

  @FieldResolver(() => [BidReceipt], { description: 'Every version’s receipt, oldest first.' })
  receipts(@Root() bid: Bid, @Ctx() ctx: SubgraphContext): Promise<BidReceipt[]> {
    // Only reached on a bid the caller may see: a page of bids costs one statement for all receipts.
    return loaderFor(ctx, 'bid.receipts', () => new DataLoader<string, BidReceipt[]>((ids) => service(ctx).receiptsOf(ids))).load(bid.id);
  }
}
