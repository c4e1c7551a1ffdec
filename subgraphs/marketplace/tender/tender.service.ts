import { randomUUID } from 'node:crypto';
import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../../core/errors.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { paginate, UUID, type Page } from '../../shared/pagination.js';
import type { Mode, Principal } from '../../../core/principal.js';
import { recordTransition } from '../audit/marketplace-audit.js';
import { BidStatus } from '../bid/bid-status.js';
import { Bid } from '../bid/bid.entity.js';
import { dbNow, dueTenderIds, settleDue, settleLocked } from './tender-clock.js';
import { AwardCriteria, ProcurementMethod, TenderStatus } from './tender-status.js';
import { assertTransition } from './tender-transitions.js';
import { Vendor } from '../vendor/vendor.entity.js';
import { VendorService } from '../vendor/vendor.service.js';
import { VendorNotInvitedError } from '../bid/bid.errors.js';
import { InvalidCriteriaError, InvalidLotsError, InvalidTenderPeriodError, NotTenderBuyerError, TenderNotEditableError, UnknownVendorError } from './tender.errors.js';
import { Tender } from './tender.entity.js';
import type { CancelTenderArgs, CreateTenderArgs, LotInput, TendersArgs, UpdateTenderArgs, ValueInput, WeightsInput } from './tender.inputs.js';
import type { StoredLot } from './tender.types.js';

/** Money as numeric(18,2) text; more than two decimals is refused rather than rounded. */
export function money(amount: number, param: string): string {
  const fixed = amount.toFixed(2);
  if (Math.abs(Number(fixed) - amount) > 1e-9) throw new DomainError('BAD_USER_INPUT', `${param} has more than two decimals`, { param, reason: 'invalid_parameter' });
  return fixed;
}

/** Tenders visible to the principal: its own in every status, others' once published; one mode only. */
export class TenderService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  private visibility(): { mode: Mode; $or: FilterQuery<Tender>[] } {
    return { mode: this.principal.mode, $or: [{ accountId: this.principal.accountId }, { status: { $ne: TenderStatus.DRAFT } }] };
  }

  isBuyer(tender: Tender): boolean {
    return tender.accountId === this.principal.accountId && tender.mode === this.principal.mode;
  }

  async list(args: TendersArgs): Promise<Page<Tender>> {
    // Settle what has expired first, so a status filter reads the settled status.
    await settleDue(this.em, await dueTenderIds(this.em, this.principal.mode));
    const where: FilterQuery<Tender>[] = [this.visibility()];
    if (args.status) where.push({ status: args.status });
    if (args.mine) where.push({ accountId: this.principal.accountId });
    return paginate(this.em, Tender, where, args);
  }

  /** The tender, settled if its deadline has passed; null when not visible. */
  async find(id: string): Promise<Tender | null> {
    if (!UUID.test(id)) return null;
    const tender = await this.em.findOne(Tender, { id, ...this.visibility() } as FilterQuery<Tender>);
    if (!tender || tender.status !== TenderStatus.ACTIVE) return tender;
    if ((await dbNow(this.em)) < tender.tenderPeriodEnd) return tender;
    await settleDue(this.em, [id]);
    return this.em.findOne(Tender, { id }, { refresh: true });
  }

  async findMany(ids: readonly string[]): Promise<(Tender | null)[]> {
    const valid = ids.filter((id) => UUID.test(id));
    const rows = valid.length ? await this.em.find(Tender, { id: { $in: valid }, ...this.visibility() } as FilterQuery<Tender>) : [];
    const byId = new Map(rows.map((tender) => [tender.id, tender]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** Finds a tender the principal may see or throws tender_not_found. */
  async get(id: string): Promise<Tender> {
    const tender = await this.find(id);
    if (!tender) throw new NotFoundError('tender', id);
    return tender;
  }

  /**
   * The tender's document ids, for its buyer and for a vendor that may bid on it (registered,
   * approved, and invited to a selective tender); anyone else who can see the tender is told why
   * not (403 vendor_not_registered, vendor_not_approved, vendor_not_invited).
   */
  async readableDocuments(id: string): Promise<{ tender: Tender; documentIds: string[] }> {
    const tender = await this.get(id);
    if (!this.isBuyer(tender)) {
      const vendor = await new VendorService(this.em, this.principal).approvedSelf(this.em);
      if (tender.procurementMethod === ProcurementMethod.SELECTIVE && !tender.invitedVendorIds.includes(vendor.id)) throw new VendorNotInvitedError();
    }
    return { tender, documentIds: tender.documentIds };
  }

  /**
   * Runs `work` in a transaction on the tender locked FOR UPDATE, settled first if its deadline
   * has passed (that settling commits even if `work` then refuses).
   */
  async locked<T>(id: string, work: (em: EntityManager, tender: Tender) => Promise<T>): Promise<T> {
    if (!UUID.test(id)) throw new NotFoundError('tender', id);
    const settled = await this.em.transactional(async (em) => {
      const tender = await em.findOne(Tender, { id, ...this.visibility() } as FilterQuery<Tender>, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (!tender) throw new NotFoundError('tender', id);
      return settleLocked(em, tender);
    });
    void settled;
    return this.em.transactional(async (em) => {
      const tender = await em.findOne(Tender, { id, ...this.visibility() } as FilterQuery<Tender>, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (!tender) throw new NotFoundError('tender', id);
      return work(em, tender);
    });
  }

  private checkCriteria(criteria: AwardCriteria, weights: WeightsInput | null | undefined): { priceWeight: number | null; qualityWeight: number | null } {
    if (criteria === AwardCriteria.PRICE_ONLY) {
      if (weights) throw new InvalidCriteriaError('weights apply to RATED_CRITERIA only');
      return { priceWeight: null, qualityWeight: null };
    }
    if (!weights) throw new InvalidCriteriaError('RATED_CRITERIA needs weights for price and quality');
    if (weights.price + weights.quality !== 100) throw new InvalidCriteriaError('The price and quality weights must sum to 100');
    if (weights.price === 0) throw new InvalidCriteriaError('RATED_CRITERIA needs a price weight above 0');
    return { priceWeight: weights.price, qualityWeight: weights.quality };
  }

  private checkLots(lots: LotInput[] | null | undefined, value: ValueInput | { amount: number }): StoredLot[] {
    if (!lots?.length) return [];
    const stored = lots.map((lot, i) => ({ id: randomUUID(), title: lot.title.trim(), description: lot.description ?? null, amount: money(lot.amount, `lots.${i}.amount`) }));
    const sum = stored.reduce((total, lot) => total + Number(lot.amount), 0);
    if (sum - value.amount > 0.005) throw new InvalidLotsError('The lots\u2019 values exceed the tender\u2019s value');
    return stored;
  }

  /** Invitations name vendors of the caller's mode, or the tender is refused (a typo would shut a vendor out). */
  private async checkInvited(ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    const found = await this.em.find(Vendor, { id: { $in: [...new Set(ids)] }, mode: this.principal.mode }, { fields: ['id'] });
    const unknown = ids.filter((id) => !found.some((vendor) => vendor.id === id));
    if (unknown.length) throw new UnknownVendorError(unknown);
  }

  private async checkPeriod(end: Date | null | undefined): Promise<Date> {
    if (!end) throw new InvalidTenderPeriodError('tenderPeriod.endDate (the deadline) is required');
    if (end <= (await dbNow(this.em))) throw new InvalidTenderPeriodError('tenderPeriod.endDate must be in the future');
    return end;
  }

  async create(args: CreateTenderArgs): Promise<Tender> {
    const procurementMethod = args.procurementMethod ?? ProcurementMethod.OPEN;
    const awardCriteria = args.awardCriteria ?? AwardCriteria.PRICE_ONLY;
    const weights = this.checkCriteria(awardCriteria, args.weights);
    const lots = this.checkLots(args.lots, args.value);
    const end = await this.checkPeriod(args.tenderPeriod.endDate);
    if (procurementMethod === ProcurementMethod.OPEN && args.invitedVendorIds?.length) {
      throw new InvalidCriteriaError('invitedVendorIds apply to SELECTIVE tenders only');
    }
    await this.checkInvited(args.invitedVendorIds ?? []);
    return this.em.transactional(async (em) => {
      const now = await dbNow(em);
      const tender = em.create(Tender, {
        accountId: this.principal.accountId,
        mode: this.principal.mode,
        title: args.title.trim(),
        description: args.description,
        valueAmount: money(args.value.amount, 'value.amount'),
        currency: args.value.currency,
        procurementMethod,
        awardCriteria,
        ...weights,
        lots,
        tenderPeriodStart: now,
        tenderPeriodEnd: end,
        awardPeriodStart: args.awardPeriod?.startDate ?? null,
        awardPeriodEnd: args.awardPeriod?.endDate ?? null,
        documentIds: args.documents ?? [],
        invitedVendorIds: [...new Set(args.invitedVendorIds ?? [])],
        createdBy: this.principal.keyId,
        status: TenderStatus.DRAFT,
        createdAt: now,
        updatedAt: now,
      });
      this.audit(em, tender, null, TenderStatus.DRAFT);
      if (args.publish) this.move(em, tender, TenderStatus.ACTIVE);
      await em.flush();
      return tender;
    });
  }

  /** Changes a draft freely; an active tender's change of terms invalidates the bids placed under the old ones. */
  async update(args: UpdateTenderArgs): Promise<Tender> {
    return this.locked(args.id, async (em, tender) => {
      if (!this.isBuyer(tender)) throw new NotTenderBuyerError('change it');
      if (tender.status !== TenderStatus.DRAFT && tender.status !== TenderStatus.ACTIVE) throw new TenderNotEditableError(tender.status);
      let termsChanged = false;
      if (args.title != null) tender.title = args.title.trim();
      if (args.description != null) tender.description = args.description;
      if (args.value) {
        const amount = money(args.value.amount, 'value.amount');
        termsChanged ||= amount !== tender.valueAmount || args.value.currency !== tender.currency;
        tender.valueAmount = amount;
        tender.currency = args.value.currency;
      }
      if (args.awardCriteria || args.weights !== undefined) {
        const criteria = args.awardCriteria ?? tender.awardCriteria;
        const weights = this.checkCriteria(criteria, args.weights === undefined ? tender.weights : args.weights);
        termsChanged ||= criteria !== tender.awardCriteria || weights.priceWeight !== (tender.priceWeight ?? null);
        tender.awardCriteria = criteria;
        Object.assign(tender, weights);
      }
      if (args.lots) {
        tender.lots = this.checkLots(args.lots, { amount: Number(tender.valueAmount) });
        termsChanged = true;
      } else if (args.value) {
        this.checkLots(tender.lots.map((lot) => ({ ...lot, amount: Number(lot.amount) })), { amount: Number(tender.valueAmount) });
      }
      if (args.tenderPeriod?.endDate) {
        const end = await this.checkPeriod(args.tenderPeriod.endDate);
        termsChanged ||= end.getTime() !== tender.tenderPeriodEnd.getTime();
        tender.tenderPeriodEnd = end;
      }
      if (args.documents) {
        termsChanged ||= JSON.stringify(args.documents) !== JSON.stringify(tender.documentIds);
        tender.documentIds = args.documents;
      }
      if (args.invitedVendorIds) {
        if (tender.procurementMethod !== ProcurementMethod.SELECTIVE) throw new InvalidCriteriaError('invitedVendorIds apply to SELECTIVE tenders only');
        await this.checkInvited(args.invitedVendorIds);
        tender.invitedVendorIds = [...new Set(args.invitedVendorIds)];
      }
      tender.updatedAt = new Date();
      if (termsChanged && tender.status === TenderStatus.ACTIVE) {
        tender.termsVersion += 1;
        // The status stays; the trail still records that the terms bids were placed under changed.
        this.audit(em, tender, TenderStatus.ACTIVE, TenderStatus.ACTIVE, `terms changed (version ${tender.termsVersion})`);
        await this.invalidateBids(em, tender);
      }
      await em.flush();
      return tender;
    });
  }

  /** Prozorro's rule: bids placed under older terms wait for their vendors' confirmation. */
  private async invalidateBids(em: EntityManager, tender: Tender): Promise<void> {
    const bids = await em.find(Bid, { tenderId: tender.id, status: BidStatus.ACTIVE });
    for (const bid of bids) {
      bid.status = BidStatus.INVALID;
      bid.updatedAt = new Date();
      recordTransition(em, {
        accountId: bid.accountId,
        mode: bid.mode,
        actor: this.principal.keyId,
        subjectType: 'bid',
        subjectId: bid.id,
        from: BidStatus.ACTIVE,
        to: BidStatus.INVALID,
        reason: `tender terms changed (version ${tender.termsVersion})`,
      });
    }
  }

  async publish(id: string): Promise<Tender> {
    return this.locked(id, async (em, tender) => {
      if (!this.isBuyer(tender)) throw new NotTenderBuyerError('publish it');
      assertTransition(tender.status, TenderStatus.ACTIVE);
      if (tender.tenderPeriodEnd <= (await dbNow(em))) throw new InvalidTenderPeriodError('tenderPeriod.endDate has passed; move it before publishing');
      tender.tenderPeriodStart = await dbNow(em);
      this.move(em, tender, TenderStatus.ACTIVE);
      await em.flush();
      return tender;
    });
  }

  async cancel(args: CancelTenderArgs): Promise<Tender> {
    return this.locked(args.id, async (em, tender) => {
      if (!this.isBuyer(tender)) throw new NotTenderBuyerError('cancel it');
      this.move(em, tender, TenderStatus.CANCELLED, args.reason);
      tender.cancellationReason = args.reason;
      await em.flush();
      return tender;
    });
  }

  /** Moves the tender by the transition table and audits the move in `em`'s transaction. */
  move(em: EntityManager, tender: Tender, to: TenderStatus, reason?: string | null, actor = this.principal.keyId): void {
    assertTransition(tender.status, to);
    this.audit(em, tender, tender.status, to, reason, actor);
    tender.status = to;
    tender.updatedAt = new Date();
  }

  private audit(em: EntityManager, tender: Tender, from: TenderStatus | null, to: TenderStatus, reason?: string | null, actor = this.principal.keyId): void {
    recordTransition(em, { accountId: tender.accountId, mode: tender.mode, actor, subjectType: 'tender', subjectId: tender.id, from, to, reason: reason ?? null });
  }
}
