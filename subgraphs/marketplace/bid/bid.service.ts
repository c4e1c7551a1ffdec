import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../../shared/not-found.error.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import type { Principal } from '../../../core/principal.js';
import type { PlatformPubSub } from '../../shared/pubsub.js';
import { recordTransition } from '../audit/marketplace-audit.js';
import { dbNow, periodOpen } from '../tender/tender-clock.js';
import { Tender } from '../tender/tender.entity.js';
import { TenderStatus } from '../tender/tender-status.js';
import { money, TenderService } from '../tender/tender.service.js';
import { VendorService } from '../vendor/vendor.service.js';
import { BidReceipt } from './bid-receipt.entity.js';
import { canonicalJson, receiptContent, sha256Hex } from './bid-receipt.js';
import { BidStatus } from './bid-status.js';
import { Bid } from './bid.entity.js';
import {
  BidAboveBudgetError,
  BidCurrencyError,
  BidExistsError,
  BidNotChangeableError,
  BidsSealedError,
  OwnTenderBidError,
  TenderNotOpenError,
  TenderPeriodClosedError,
  UnknownLotError,
  VendorNotInvitedError,
} from './bid.errors.js';
import type { AmendBidArgs, BidReceiptArgs, PlaceBidArgs, TenderBidsArgs } from './bid.inputs.js';
import type { BidReceiptVerification, BidWithReceipt } from './bid.types.js';

/** The topic of a tender's bid count (counts only: no amount, vendor or document travels on it). */
export function bidCountTopic(mode: string, tenderId: string): string {
  return `marketplace:tender-bids:${mode}:${tenderId}`;
}

/** Bids not withdrawn of each tender, in one statement; for the buyer's own counts only (see BidService.countsOf). */
export async function bidCounts(em: EntityManager, tenderIds: readonly string[]): Promise<number[]> {
  const rows = tenderIds.length
    ? await em.execute<{ tender_id: string; count: string }[]>(
        `select "tender_id", count(*) as "count" from "marketplace"."bid" where "tender_id" = any(?::uuid[]) and "status" <> 'withdrawn' group by "tender_id"`,
        [`{${tenderIds.join(',')}}`],
      )
    : [];
  const byTender = new Map(rows.map((row) => [row.tender_id, Number(row.count)]));
  return tenderIds.map((id) => byTender.get(id) ?? 0);
}

/**
 * Who may learn how many bids a tender has, as SQL over the tender row `t` (parameters: the
 * caller's account and mode): the buyer always; anyone else once the tender period is over, that
 * is past ACTIVE, and for a tender cancelled while open only after its deadline has passed.
 */
const COUNT_VISIBLE = `(("t"."account_id" = ? and "t"."mode" = ?) or ("t"."status" not in ('draft', 'active') and ("t"."status" <> 'cancelled' or "t"."tender_period_end" <= clock_timestamp())))`;

/**
 * The sealed-bid rule as SQL over a bid `b` and its tender `t` (parameters: the caller's account,
 * then its account and mode), for reads that must not look each bid up alone: the vendor's own
 * bids always; every bid to the buyer once the tender is past ACTIVE, or ACTIVE past its deadline
 * by the database clock and not yet settled by a read (no bid can change any more). `canSeeAll`
 * is the same rule for a tender already loaded.
 */
const BID_VISIBLE = `("b"."account_id" = ? or ("t"."account_id" = ? and "t"."mode" = ? and ("t"."status" not in ('draft', 'active') or ("t"."status" = 'active' and "t"."tender_period_end" <= clock_timestamp()))))`;

/**
 * Sealed bids. Every write locks the tender row and checks the deadline by the database clock
 * twice: when the lock is granted, and as the last statement before COMMIT. Every read goes
 * through `visible`, the one place that decides who sees which bids.
 */
export class BidService {
  private readonly tenders: TenderService;
  private readonly vendors: VendorService;

  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
    private readonly pubsub?: PlatformPubSub,
  ) {
    this.tenders = new TenderService(em, principal);
    this.vendors = new VendorService(em, principal);
  }

  /**
   * The sealed-bid rule: a vendor sees its own bids always; the buyer sees every bid once the
   * tender period is over (never while active); nobody else sees any.
   */
  private canSeeAll(tender: Tender): boolean {
    return this.tenders.isBuyer(tender) && tender.status !== TenderStatus.ACTIVE && tender.status !== TenderStatus.DRAFT;
  }

  /**
   * Each tender's count of bids not withdrawn, or null where the caller may not know it yet
   * (COUNT_VISIBLE), in one statement: before the deadline only the buyer learns how many bids
   * there are, or whether there are any. The tenders are ones the caller already sees.
   */
  async countsOf(tenderIds: readonly string[]): Promise<(number | null)[]> {
    const rows = tenderIds.length
      ? await this.em.execute<{ id: string; count: string | null }[]>(
          `select "t"."id", case when ${COUNT_VISIBLE} then (select count(*) from "marketplace"."bid" "b" where "b"."tender_id" = "t"."id" and "b"."status" <> 'withdrawn') end as "count"
             from "marketplace"."tender" "t" where "t"."id" = any(?::uuid[])`,
          [this.principal.accountId, this.principal.mode, `{${tenderIds.join(',')}}`],
        )
      : [];
    const byTender = new Map(rows.map((row) => [row.id, row.count === null ? null : Number(row.count)]));
    return tenderIds.map((id) => byTender.get(id) ?? null);
  }

  async list(args: TenderBidsArgs): Promise<Page<Bid>> {
    const tender = await this.tenders.get(args.id);
    if (this.canSeeAll(tender)) return paginate(this.em, Bid, [{ tenderId: tender.id }], args);
    if (this.tenders.isBuyer(tender)) throw new BidsSealedError();
    const vendor = await this.vendors.mine();
    if (!vendor) return { data: [], hasMore: false, nextCursor: null };
    return paginate(this.em, Bid, [{ tenderId: tender.id, vendorId: vendor.id }], args);
  }

  /** A bid the caller may see, or null. */
  async find(id: string): Promise<Bid | null> {
    const [bid] = await this.findMany([id]);
    return bid;
  }

  /**
   * The bids the caller may see among `ids`, in their order (null for the rest), in one statement
   * that applies the sealed-bid rule itself (BID_VISIBLE): a page of references costs one query.
   */
  async findMany(ids: readonly string[]): Promise<(Bid | null)[]> {
    const valid = [...new Set(ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))];
    const rows = valid.length
      ? await this.em.execute<Record<string, unknown>[]>(
          `select "b".* from "marketplace"."bid" "b" join "marketplace"."tender" "t" on "t"."id" = "b"."tender_id"
            where "b"."id" = any(?::uuid[]) and "b"."mode" = ? and ${BID_VISIBLE}`,
          [`{${valid.join(',')}}`, this.principal.mode, this.principal.accountId, this.principal.accountId, this.principal.mode],
        )
      : [];
    const byId = new Map(rows.map((row) => [String(row.id), this.em.map(Bid, row)]));
    return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
  }

  /** The receipts of each bid, oldest first, in one statement; for bids already shown to the caller. */
  async receiptsOf(bidIds: readonly string[]): Promise<BidReceipt[][]> {
    const rows = await this.em.find(BidReceipt, { bidId: { $in: [...bidIds] } }, { orderBy: { bidId: 'asc', version: 'asc' } });
    return bidIds.map((id) => rows.filter((row) => row.bidId === id));
  }

  async place(args: PlaceBidArgs): Promise<BidWithReceipt> {
    if (!UUID.test(args.id)) throw new NotFoundError('tender', args.id);
    const placed = await this.inTenderPeriod(args.id, async (em, tender) => {
      const vendor = await this.vendors.approvedSelf(em);
      if (tender.accountId === this.principal.accountId) throw new OwnTenderBidError();
      if (tender.procurementMethod === 'selective' && !tender.invitedVendorIds.includes(vendor.id)) throw new VendorNotInvitedError();
      const lotId = this.checkLot(tender, args.lotId ?? null);
      const amount = this.checkValue(tender, lotId, args.amount, args.currency);
      const existing = await em.findOne(Bid, { tenderId: tender.id, vendorId: vendor.id, lotId, status: { $ne: BidStatus.WITHDRAWN } });
      if (existing) throw new BidExistsError(existing.id);
      const now = await dbNow(em);
      const bid = em.create(Bid, {
        accountId: this.principal.accountId,
        mode: this.principal.mode,
        tenderId: tender.id,
        lotId,
        vendorId: vendor.id,
        amount,
        currency: args.currency,
        documents: args.documents,
        qualityAnswers: args.qualityAnswers,
        termsVersion: tender.termsVersion,
        status: BidStatus.ACTIVE,
        createdAt: now,
        updatedAt: now,
      });
      this.audit(em, bid, null, BidStatus.ACTIVE);
      return { bid, receipt: this.receipt(em, bid, now) };
    });
    await this.publishCount(placed.bid.tenderId);
    return placed;
  }

  /** A new version of the caller's bid, with a new receipt; an invalid bid amended under the current terms is valid again. */
  async amend(args: AmendBidArgs): Promise<BidWithReceipt> {
    const own = await this.ownBid(args.id);
    return this.inTenderPeriod(own.tenderId, async (em, tender) => {
      const bid = await em.findOneOrFail(Bid, { id: own.id }, { refresh: true });
      if (bid.status !== BidStatus.ACTIVE && bid.status !== BidStatus.INVALID) throw new BidNotChangeableError(bid.status, 'amended');
      await this.vendors.approvedSelf(em);
      const currency = args.currency ?? bid.currency;
      bid.amount = this.checkValue(tender, bid.lotId ?? null, args.amount ?? Number(bid.amount), currency);
      bid.currency = currency;
      if (args.documents) bid.documents = args.documents;
      if (args.qualityAnswers) bid.qualityAnswers = args.qualityAnswers;
      const from = bid.status;
      bid.status = BidStatus.ACTIVE;
      bid.termsVersion = tender.termsVersion;
      bid.version += 1;
      const now = await dbNow(em);
      bid.updatedAt = now;
      this.audit(em, bid, from, BidStatus.ACTIVE, `amended (version ${bid.version})`);
      return { bid, receipt: this.receipt(em, bid, now) };
    });
  }

  async withdraw(id: string): Promise<Bid> {
    const own = await this.ownBid(id);
    const bid = await this.inTenderPeriod(own.tenderId, async (em) => {
      const bid = await em.findOneOrFail(Bid, { id: own.id }, { refresh: true });
      if (bid.status !== BidStatus.ACTIVE && bid.status !== BidStatus.INVALID) throw new BidNotChangeableError(bid.status, 'withdrawn');
      this.audit(em, bid, bid.status, BidStatus.WITHDRAWN);
      bid.status = BidStatus.WITHDRAWN;
      bid.updatedAt = await dbNow(em);
      return bid;
    });
    await this.publishCount(bid.tenderId);
    return bid;
  }

  /** Prozorro's confirmation: an invalid bid accepted as it is under the tender's current terms. */
  async confirm(id: string): Promise<Bid> {
    const own = await this.ownBid(id);
    return this.inTenderPeriod(own.tenderId, async (em, tender) => {
      const bid = await em.findOneOrFail(Bid, { id: own.id }, { refresh: true });
      if (bid.status !== BidStatus.INVALID) throw new BidNotChangeableError(bid.status, 'confirmed (only an invalid bid is)');
      await this.vendors.approvedSelf(em);
      // The new terms may have lowered the budget or changed the currency: then amend, not confirm.
      this.checkValue(tender, bid.lotId ?? null, Number(bid.amount), bid.currency);
      this.audit(em, bid, BidStatus.INVALID, BidStatus.ACTIVE, `confirmed under terms version ${tender.termsVersion}`);
      bid.status = BidStatus.ACTIVE;
      bid.termsVersion = tender.termsVersion;
      bid.updatedAt = await dbNow(em);
      return bid;
    });
  }

  async verifyReceipt(args: BidReceiptArgs): Promise<BidReceiptVerification | null> {
    if (!UUID.test(args.id)) return null;
    const receipt = await this.em.findOne(BidReceipt, { id: args.id, mode: this.principal.mode });
    if (!receipt) return null;
    const bid = await this.find(receipt.bidId);
    if (!bid) return null;
    const content = JSON.parse(receipt.canonical) as Record<string, unknown>;
    const recomputed = sha256Hex(canonicalJson(content));
    const current = canonicalJson(receiptContent(bid, new Date(String(content.recordedAt))));
    return {
      receipt,
      recomputedSha256: recomputed,
      valid: recomputed === receipt.sha256 && (!args.sha256 || args.sha256 === receipt.sha256),
      matchesCurrentBid: bid.status !== BidStatus.WITHDRAWN && current === receipt.canonical,
    };
  }

  private async ownBid(id: string): Promise<Bid> {
    const bid = UUID.test(id) ? await this.em.findOne(Bid, { id, accountId: this.principal.accountId, mode: this.principal.mode }) : null;
    if (!bid) throw new NotFoundError('bid', id);
    return bid;
  }

  /**
   * Runs `work` on the tender locked FOR UPDATE, only while its period is open by the database
   * clock: checked when the lock is granted and again as the last statement before COMMIT, so a
   * write that would commit at or after the deadline rolls back instead.
   */
  private async inTenderPeriod<T>(tenderId: string, work: (em: EntityManager, tender: Tender) => Promise<T>): Promise<T> {
    const visibility = { mode: this.principal.mode, status: { $ne: TenderStatus.DRAFT } } as FilterQuery<Tender>;
    return this.em.transactional(async (em) => {
      const tender = await em.findOne(Tender, { id: tenderId, ...(visibility as object) }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (!tender) throw new NotFoundError('tender', tenderId);
      if (tender.status !== TenderStatus.ACTIVE) {
        if (tender.status === TenderStatus.CANCELLED) throw new TenderNotOpenError(tender.status);
        throw new TenderPeriodClosedError(tender.tenderPeriodEnd);
      }
      if (!(await periodOpen(em, tender.id))) throw new TenderPeriodClosedError(tender.tenderPeriodEnd);
      const result = await work(em, tender);
      await em.flush();
      if (!(await periodOpen(em, tender.id))) throw new TenderPeriodClosedError(tender.tenderPeriodEnd);
      return result;
    });
  }

  private checkLot(tender: Tender, lotId: string | null): string | null {
    if (!tender.lots.length) {
      if (lotId) throw new UnknownLotError('This tender has no lots; leave lotId out');
      return null;
    }
    if (!lotId) throw new UnknownLotError('This tender has lots; name the lot (lotId)');
    if (!tender.lots.some((lot) => lot.id === lotId)) throw new UnknownLotError(`The tender has no lot ${lotId}`);
    return lotId;
  }

  /** The amount as stored text, within the tender's (or lot's) budget and in its currency. */
  private checkValue(tender: Tender, lotId: string | null, amount: number, currency: string): string {
    if (currency !== tender.currency) throw new BidCurrencyError(tender.currency);
    const fixed = money(amount, 'amount');
    const budget = lotId ? tender.lots.find((lot) => lot.id === lotId)!.amount : tender.valueAmount;
    if (Number(fixed) > Number(budget)) throw new BidAboveBudgetError(budget, tender.currency);
    return fixed;
  }

  private receipt(em: EntityManager, bid: Bid, recordedAt: Date): BidReceipt {
    const canonical = canonicalJson(receiptContent(bid, recordedAt));
    return em.create(BidReceipt, {
      accountId: bid.accountId,
      mode: bid.mode,
      bidId: bid.id,
      version: bid.version,
      canonical,
      sha256: sha256Hex(canonical),
      recordedAt,
    });
  }

  private audit(em: EntityManager, bid: Bid, from: BidStatus | null, to: BidStatus, reason?: string): void {
    recordTransition(em, { accountId: bid.accountId, mode: bid.mode, actor: this.principal.keyId, subjectType: 'bid', subjectId: bid.id, from, to, reason: reason ?? null });
  }

  /** After the commit: the tender's count, to the buyer's subscriptions. */
  private async publishCount(tenderId: string): Promise<void> {
    if (!this.pubsub) return;
    // In the request's transaction when there is one (a keyed mutation commits after this), so the new bid counts.
    const [count] = await bidCounts(this.em.fork({ keepTransactionContext: true }), [tenderId]);
    this.pubsub.publish(bidCountTopic(this.principal.mode, tenderId), { tenderId, count });
  }
}
