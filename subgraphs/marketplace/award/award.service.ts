import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../../core/errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { UUID } from '../../shared/pagination.js';
import type { Principal } from '../../../core/principal.js';
import { recordTransition } from '../audit/marketplace-audit.js';
import { BidStatus } from '../bid/bid-status.js';
import { Bid } from '../bid/bid.entity.js';
import { AwardCriteria, TenderStatus } from '../tender/tender-status.js';
import { IllegalTenderTransitionError } from '../tender/tender-transitions.js';
import { NotTenderBuyerError } from '../tender/tender.errors.js';
import type { Tender } from '../tender/tender.entity.js';
import { TenderService } from '../tender/tender.service.js';
import { raiseWebhookEvent } from '../webhook/marketplace-webhook-outbox.js';
import { awardWebhookData, tenderWebhookData } from '../tender/tender-webhook-data.js';
import { Award, AwardStatus, type BidScore } from './award.entity.js';
import { AwardsPendingError, BidNotValidError, LotAlreadyAwardedError, NotBestBidError, QualityScoresError } from './award.errors.js';
import type { AwardTenderArgs, CancelAwardArgs } from './award.inputs.js';
import { rankByPrice, rankByRatedCriteria } from './award-scoring.js';

const LIVE_AWARD = { $ne: AwardStatus.CANCELLED } as const;

/** Awards: made by the buyer after the deadline, to the best valid bid of a lot, with the scores that decided it. */
export class AwardService {
  private readonly tenders: TenderService;

  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {
    this.tenders = new TenderService(em, principal);
  }

  /** Awards of tenders past their period (published with the tender); none while bids are sealed. */
  async ofTenders(tenders: readonly Tender[]): Promise<Award[][]> {
    const open = tenders.filter((t) => t.status !== TenderStatus.ACTIVE && t.status !== TenderStatus.DRAFT).map((t) => t.id);
    const rows = open.length ? await this.em.find(Award, { tenderId: { $in: open } }, { orderBy: { createdAt: 'asc', id: 'asc' } }) : [];
    return tenders.map((t) => rows.filter((award) => award.tenderId === t.id));
  }

  async award(args: AwardTenderArgs): Promise<Tender> {
    return this.tenders.locked(args.id, async (em, tender) => {
      if (!this.tenders.isBuyer(tender)) throw new NotTenderBuyerError('award it');
      if (tender.status !== TenderStatus.EVALUATION && tender.status !== TenderStatus.AWARDED) throw new IllegalTenderTransitionError(tender.status, TenderStatus.AWARDED);
      const named = args.bidId ? await this.bidOf(em, tender, args.bidId) : null;
      const lotId = this.lotOf(tender, args.lotId ?? named?.lotId ?? null);
      const current = await em.findOne(Award, { tenderId: tender.id, lotId, status: LIVE_AWARD });
      if (current?.status === AwardStatus.ACTIVE) throw new LotAlreadyAwardedError(current.id);
      let awarded: Award;
      if (current) {
        // A pending award (the next best after a cancellation) is confirmed as it stands.
        if (named && named.id !== current.bidId) throw new NotBestBidError(current.bidId);
        this.auditAward(em, current, AwardStatus.PENDING, AwardStatus.ACTIVE, 'confirmed by the buyer');
        current.status = AwardStatus.ACTIVE;
        current.updatedAt = new Date();
        awarded = current;
      } else {
        const valid = await em.find(Bid, { tenderId: tender.id, lotId, status: BidStatus.ACTIVE });
        if (!valid.length) throw new BidNotValidError('missing: the lot has no valid bid');
        const ranking = this.rank(tender, valid, args.qualityScores ?? null);
        const best = ranking[0].bidId;
        if (named && !valid.some((bid) => bid.id === named.id)) throw new BidNotValidError(named.status);
        if (named && named.id !== best) throw new NotBestBidError(best);
        const winner = valid.find((bid) => bid.id === best)!;
        const award = em.create(Award, {
          accountId: tender.accountId,
          mode: tender.mode,
          tenderId: tender.id,
          lotId,
          bidId: winner.id,
          vendorId: winner.vendorId,
          amount: winner.amount,
          currency: winner.currency,
          status: AwardStatus.ACTIVE,
          scores: ranking,
        });
        this.auditAward(em, award, null, AwardStatus.ACTIVE);
        for (const bid of valid) this.moveBid(em, bid, bid.id === winner.id ? BidStatus.AWARDED : BidStatus.UNSUCCESSFUL, bid.id === winner.id ? 'awarded' : `lost to bid ${winner.id}`);
        awarded = award;
      }
      await em.flush();
      await this.decide(em, tender);
      raiseWebhookEvent(em, tender, 'tender.awarded', { tender: tenderWebhookData(tender), award: awardWebhookData(awarded) });
      await em.flush();
      return tender;
    });
  }

  /** Cancels a lot's award with a reason: its bid becomes unsuccessful and the next best valid bid the pending award. */
  async cancel(args: CancelAwardArgs): Promise<Tender> {
    return this.tenders.locked(args.id, async (em, tender) => {
      if (!this.tenders.isBuyer(tender)) throw new NotTenderBuyerError('cancel an award');
      if (tender.status !== TenderStatus.EVALUATION && tender.status !== TenderStatus.AWARDED) {
        throw new DomainError('CONFLICT', `A ${tender.status} tender's awards cannot be cancelled`, { reason: 'award_not_cancellable' });
      }
      const lotId = this.lotOf(tender, args.lotId ?? null);
      const award = await em.findOne(Award, { tenderId: tender.id, lotId, status: LIVE_AWARD });
      if (!award) throw new NotFoundError('award', lotId ?? tender.id);
      this.auditAward(em, award, award.status, AwardStatus.CANCELLED, args.reason);
      award.status = AwardStatus.CANCELLED;
      award.cancellationReason = args.reason;
      award.updatedAt = new Date();
      const cancelledBid = await em.findOneOrFail(Bid, { id: award.bidId });
      this.moveBid(em, cancelledBid, BidStatus.UNSUCCESSFUL, `award cancelled: ${args.reason}`);
      // The unit of work inserts before it updates: the cancellation must reach the one-live-award-per-lot index first.
      await em.flush();
      // The next best is the next in the decision's ranking that lost only to an award, never held one.
      const held = new Set((await em.find(Award, { tenderId: tender.id, lotId })).map((a) => a.bidId));
      const candidates = await em.find(Bid, { id: { $in: award.scores.map((s) => s.bidId) }, status: BidStatus.UNSUCCESSFUL });
      const next = award.scores.map((s) => candidates.find((bid) => bid.id === s.bidId)).find((bid) => bid && !held.has(bid.id));
      if (next) {
        this.moveBid(em, next, BidStatus.AWARDED, `next best after award ${award.id} was cancelled`);
        const pending = em.create(Award, {
          accountId: tender.accountId,
          mode: tender.mode,
          tenderId: tender.id,
          lotId,
          bidId: next.id,
          vendorId: next.vendorId,
          amount: next.amount,
          currency: next.currency,
          status: AwardStatus.PENDING,
          scores: award.scores,
        });
        this.auditAward(em, pending, null, AwardStatus.PENDING, `next best after award ${award.id} was cancelled`);
      }
      await em.flush();
      await this.decide(em, tender);
      return tender;
    });
  }

  /** The contracts are signed: every award active → complete. */
  async complete(id: string): Promise<Tender> {
    return this.tenders.locked(id, async (em, tender) => {
      if (!this.tenders.isBuyer(tender)) throw new NotTenderBuyerError('complete it');
      if (tender.status !== TenderStatus.AWARDED) throw new IllegalTenderTransitionError(tender.status, TenderStatus.COMPLETE);
      const awards = await em.find(Award, { tenderId: tender.id, status: LIVE_AWARD });
      if (awards.some((a) => a.status === AwardStatus.PENDING)) throw new AwardsPendingError();
      this.tenders.move(em, tender, TenderStatus.COMPLETE, 'contracts signed');
      await em.flush();
      return tender;
    });
  }

  private rank(tender: Tender, valid: Bid[], qualityScores: { bidId: string; score: number }[] | null): BidScore[] {
    if (tender.awardCriteria === AwardCriteria.PRICE_ONLY) {
      if (qualityScores?.length) throw new QualityScoresError('A PRICE_ONLY tender takes no quality scores');
      return rankByPrice(valid);
    }
    const scores = new Map((qualityScores ?? []).map((q) => [q.bidId, q.score]));
    const missing = valid.filter((bid) => !scores.has(bid.id));
    if (missing.length) throw new QualityScoresError(`Give a quality score for every valid bid of the lot; missing ${missing.map((b) => b.id).join(', ')}`);
    const stray = [...scores.keys()].filter((bidId) => !valid.some((bid) => bid.id === bidId));
    if (stray.length) throw new QualityScoresError(`Not valid bids of the lot: ${stray.join(', ')}`);
    return rankByRatedCriteria(valid, scores, tender.priceWeight ?? 0, tender.qualityWeight ?? 0);
  }

  private lotOf(tender: Tender, lotId: string | null): string | null {
    if (!tender.lots.length) return null;
    if (!lotId) throw new DomainError('BAD_USER_INPUT', 'This tender has lots; name the lot (lotId) or the bid', { param: 'lotId', reason: 'invalid_lot' });
    if (!tender.lots.some((lot) => lot.id === lotId)) throw new DomainError('BAD_USER_INPUT', `The tender has no lot ${lotId}`, { param: 'lotId', reason: 'invalid_lot' });
    return lotId;
  }

  private async bidOf(em: EntityManager, tender: Tender, bidId: string): Promise<Bid> {
    const bid = UUID.test(bidId) ? await em.findOne(Bid, { id: bidId, tenderId: tender.id }) : null;
    if (!bid) throw new NotFoundError('bid', bidId);
    return bid;
  }

  /** Moves the tender to what its lots now say: every lot awarded or without a valid bid → awarded, or unsuccessful when none is awarded. */
  private async decide(em: EntityManager, tender: Tender): Promise<void> {
    const awards = await em.find(Award, { tenderId: tender.id, status: LIVE_AWARD });
    const valid = await em.find(Bid, { tenderId: tender.id, status: BidStatus.ACTIVE });
    const lots: (string | null)[] = tender.lots.length ? tender.lots.map((lot) => lot.id) : [null];
    const undecided = lots.filter((lot) => !awards.some((a) => (a.lotId ?? null) === lot) && valid.some((b) => (b.lotId ?? null) === lot));
    const to = undecided.length ? TenderStatus.EVALUATION : awards.length ? TenderStatus.AWARDED : TenderStatus.UNSUCCESSFUL;
    if (to === tender.status) return;
    this.tenders.move(em, tender, to);
    await em.flush();
  }

  private moveBid(em: EntityManager, bid: Bid, to: BidStatus, reason: string): void {
    recordTransition(em, { accountId: bid.accountId, mode: bid.mode, actor: this.principal.keyId, subjectType: 'bid', subjectId: bid.id, from: bid.status, to, reason });
    bid.status = to;
    bid.updatedAt = new Date();
  }

  private auditAward(em: EntityManager, award: Award, from: AwardStatus | null, to: AwardStatus, reason?: string): void {
    recordTransition(em, { accountId: award.accountId, mode: award.mode, actor: this.principal.keyId, subjectType: 'award', subjectId: award.id, from, to, reason: reason ?? null });
  }
}
