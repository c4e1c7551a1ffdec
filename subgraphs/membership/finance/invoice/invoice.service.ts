import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../../core/principal.js';
import { NotFoundError } from '../../../shared/not-found.error.js';
import { paginate, UUID, type Page } from '../../../shared/pagination.js';
import { AuditService } from '../../audit/audit.service.js';
import type { MemberCategory } from '../../category/member-category.entity.js';
import { addDays, isCalendarDate, type Period } from '../../member/member-period.js';
import { today } from '../../member/member-status.js';
import type { Member } from '../../member/member.entity.js';
import { MemberArgumentNotFoundError } from '../../member/member.errors.js';
import { MemberService } from '../../member/member.service.js';
import { Invoice } from './invoice.entity.js';
import { IllegalInvoiceTransitionError, InvalidInvoiceError } from './invoice.errors.js';
import { MAX_INVOICE_AMOUNT, type InvoiceLine, type InvoiceLineInput } from './invoice-line.js';
import { INVOICE_ACTIONS, InvoiceKind, InvoiceStatus, PAYABLE } from './invoice-status.js';
import { NewInvoiceStatus, type CreateInvoiceArgs, type InvoicesArgs } from './invoice.inputs.js';
import { announcePaid } from './invoice-webhooks.js';

/** Days from finalisation to the due date when none is given. */
const DEFAULT_DUE_DAYS = 30;

/** What the audit trail keeps of an invoice. */
export function invoiceSnapshot(i: Invoice): Record<string, unknown> {
  return {
    status: i.status,
    number: i.number ?? null,
    total: i.total,
    amountPaid: i.amountPaid,
    amountRefunded: i.amountRefunded,
    currency: i.currency,
    dueOn: i.dueOn,
  };
}

/**
 * The stored lines and their total, refused (before anything is written) unless every line and
 * the total lie within what the API represents: each bound alone lets 1,000,000 × 100,000,000
 * through, and lines that cancel out would otherwise be stored and fail every read.
 */
export function priceLines(inputs: readonly InvoiceLineInput[]): { lines: InvoiceLine[]; total: number } {
  const lines = inputs.map((line, index): InvoiceLine => {
    const quantity = line.quantity ?? 1;
    const amount = quantity * line.unitAmount;
    if (Math.abs(amount) > MAX_INVOICE_AMOUNT) {
      throw new InvalidInvoiceError(`lines.${index}.unitAmount`, `lines.${index}: quantity × unitAmount must lie between -${MAX_INVOICE_AMOUNT} and ${MAX_INVOICE_AMOUNT}`);
    }
    return { description: line.description.trim(), quantity, unitAmount: line.unitAmount, amount };
  });
  const total = lines.reduce((sum, line) => sum + line.amount, 0);
  if (total < 0) throw new InvalidInvoiceError('lines', 'The lines must not add up to less than zero');
  if (total > MAX_INVOICE_AMOUNT) throw new InvalidInvoiceError('lines', 'The lines add up to more than an invoice may hold');
  return { lines, total };
}

/** Invoices of the principal's account and mode. */
export class InvoiceService {
  private readonly audit: AuditService;

  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {
    this.audit = new AuditService(em, principal);
  }

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  list(args: InvoicesArgs): Promise<Page<Invoice>> {
    const where: FilterQuery<Invoice>[] = [this.scope];
    if (args.status) where.push({ status: args.status });
    if (args.memberId) {
      if (!UUID.test(args.memberId)) return Promise.resolve({ data: [], hasMore: false, nextCursor: null });
      where.push({ memberId: args.memberId });
    }
    if (args.issuedFrom) where.push({ issuedOn: { $gte: args.issuedFrom } });
    if (args.issuedTo) where.push({ issuedOn: { $lte: args.issuedTo } });
    if (args.overdue === true) where.push({ status: InvoiceStatus.OPEN, dueOn: { $lt: today() } });
    if (args.overdue === false) where.push({ $or: [{ status: { $ne: InvoiceStatus.OPEN } }, { dueOn: { $gte: today() } }] });
    return paginate(this.em, Invoice, where, args);
  }

  async find(id: string): Promise<Invoice | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Invoice, { id, ...this.scope });
  }

  async findMany(ids: readonly string[]): Promise<(Invoice | null)[]> {
    const valid = ids.filter((id) => UUID.test(id));
    const rows = valid.length ? await this.em.find(Invoice, { id: { $in: valid }, ...this.scope }) : [];
    const byId = new Map(rows.map((i) => [i.id, i]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** The id of the member's renewal invoice still owed (OPEN or UNCOLLECTIBLE), or null. */
  async openRenewalOf(memberId: string): Promise<string | null> {
    const open = await this.em.findOne(
      Invoice,
      { ...this.scope, memberId, kind: InvoiceKind.RENEWAL, status: { $in: [...PAYABLE] } },
      { fields: ['id'], orderBy: { createdAt: 'asc' } },
    );
    return open?.id ?? null;
  }

  /** The invoice, row-locked for the rest of the caller's transaction. */
  async lock(id: string, notFound: () => Error = () => new NotFoundError('invoice', id)): Promise<Invoice> {
    const invoice = UUID.test(id)
      ? await this.em.findOne(Invoice, { id, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true })
      : null;
    if (!invoice) throw notFound();
    return invoice;
  }

  async create(args: CreateInvoiceArgs): Promise<Invoice> {
    if (args.dueOn != null && !isCalendarDate(args.dueOn)) throw new InvalidInvoiceError('dueOn', 'dueOn must be a date (YYYY-MM-DD)');
    const { lines, total } = priceLines(args.lines);
    return this.em.transactional(async (em) => {
      const member = await new MemberService(em, this.principal).find(args.memberId);
      if (!member) throw new MemberArgumentNotFoundError(args.memberId, 'memberId');
      const service = new InvoiceService(em, this.principal);
      const invoice = em.create(Invoice, {
        ...this.scope,
        memberId: member.id,
        categoryId: member.categoryId ?? null,
        kind: InvoiceKind.MANUAL,
        status: InvoiceStatus.DRAFT,
        currency: args.currency.toUpperCase(),
        description: args.description ?? null,
        lines,
        total,
        dueOn: args.dueOn ?? addDays(today(), DEFAULT_DUE_DAYS),
      });
      service.audit.record('invoice', invoice.id, 'invoice.created', null, invoiceSnapshot(invoice));
      if ((args.status ?? NewInvoiceStatus.OPEN) === NewInvoiceStatus.OPEN) await service.finalizeLocked(invoice, args.dueOn == null);
      return invoice;
    });
  }

  /**
   * The open invoice for a membership period (a new member's first period, or a renewal), made
   * in the caller's transaction: one line, the category's fee, due when the period starts (or
   * today, if that is later).
   */
  async createForPeriod(member: Member, category: MemberCategory, period: Period, kind: InvoiceKind.MEMBERSHIP | InvoiceKind.RENEWAL): Promise<Invoice> {
    const span = period.periodEnd ? `${period.periodStart} to ${period.periodEnd}` : `from ${period.periodStart}, lifetime`;
    const invoice = this.em.create(Invoice, {
      ...this.scope,
      memberId: member.id,
      categoryId: category.id,
      kind,
      status: InvoiceStatus.DRAFT,
      currency: category.currency,
      description: `${kind === InvoiceKind.RENEWAL ? 'Renewal' : 'Membership'}: ${category.name}`,
      lines: [{ description: `${category.name}, ${span}`, quantity: 1, unitAmount: category.feeAmount, amount: category.feeAmount }],
      total: category.feeAmount,
      dueOn: period.periodStart > today() ? period.periodStart : today(),
      periodStart: period.periodStart,
      periodEnd: period.periodEnd,
    });
    this.audit.record('invoice', invoice.id, 'invoice.created', null, invoiceSnapshot(invoice));
    await this.finalizeLocked(invoice, false);
    return invoice;
  }

  /** The open invoice for a place at a paid event, made in the caller's transaction: one line, the event's price, due when the place is released. */
  async createForRegistration(member: Member, event: { title: string; price: number; currency?: string | null }, attendeeId: string, dueAt: Date): Promise<Invoice> {
    const invoice = this.em.create(Invoice, {
      ...this.scope,
      memberId: member.id,
      categoryId: member.categoryId ?? null,
      kind: InvoiceKind.EVENT,
      status: InvoiceStatus.DRAFT,
      currency: event.currency!,
      description: `Event: ${event.title}`.slice(0, 500),
      lines: [{ description: event.title, quantity: 1, unitAmount: event.price, amount: event.price }],
      total: event.price,
      dueOn: dueAt.toISOString().slice(0, 10),
      attendeeId,
    });
    this.audit.record('invoice', invoice.id, 'invoice.created', null, invoiceSnapshot(invoice));
    await this.finalizeLocked(invoice, false);
    return invoice;
  }

  async finalize(id: string): Promise<Invoice> {
    return this.em.transactional(async (em) => {
      const service = new InvoiceService(em, this.principal);
      const invoice = await service.lock(id);
      await service.finalizeLocked(invoice, false);
      return invoice;
    });
  }

  async void(id: string): Promise<Invoice> {
    return this.act(id, 'void', 'voided', (invoice) => {
      invoice.voidedAt = new Date();
    });
  }

  async markUncollectible(id: string): Promise<Invoice> {
    return this.act(id, 'markUncollectible', 'marked uncollectible');
  }

  /** Deletes a draft; a finalised invoice is kept for good (void it instead). */
  async deleteDraft(id: string): Promise<{ id: string; deleted: boolean }> {
    return this.em.transactional(async (em) => {
      const service = new InvoiceService(em, this.principal);
      const invoice = await service.lock(id);
      if (invoice.status !== InvoiceStatus.DRAFT) throw new IllegalInvoiceTransitionError('deleted', invoice.status);
      service.audit.record('invoice', invoice.id, 'invoice.deleted', invoiceSnapshot(invoice), null);
      em.remove(invoice);
      return { id: invoice.id, deleted: true };
    });
  }

  /**
   * Moves a locked invoice after its money changed: PAID once payments less refunds cover the
   * total, back to OPEN when a refund uncovers a paid one. Voided and uncollectible invoices keep
   * their status on refunds.
   */
  settle(invoice: Invoice): void {
    const before = invoiceSnapshot(invoice);
    if (invoice.unpaid === 0 && (invoice.status === InvoiceStatus.OPEN || invoice.status === InvoiceStatus.UNCOLLECTIBLE)) {
      invoice.status = InvoiceStatus.PAID;
      invoice.paidAt = new Date();
      this.audit.record('invoice', invoice.id, 'invoice.paid', before, invoiceSnapshot(invoice));
    } else if (invoice.unpaid > 0 && invoice.status === InvoiceStatus.PAID) {
      invoice.status = InvoiceStatus.OPEN;
      invoice.paidAt = null;
      this.audit.record('invoice', invoice.id, 'invoice.reopened', before, invoiceSnapshot(invoice));
    }
  }

  private async act(id: string, action: 'void' | 'markUncollectible', verb: string, apply?: (invoice: Invoice) => void): Promise<Invoice> {
    return this.em.transactional(async (em) => {
      const service = new InvoiceService(em, this.principal);
      const invoice = await service.lock(id);
      const rule = INVOICE_ACTIONS[action];
      if (!(rule.from as readonly InvoiceStatus[]).includes(invoice.status)) throw new IllegalInvoiceTransitionError(verb, invoice.status);
      const before = invoiceSnapshot(invoice);
      invoice.status = rule.to;
      apply?.(invoice);
      service.audit.record('invoice', invoice.id, `invoice.${action === 'void' ? 'voided' : 'marked_uncollectible'}`, before, invoiceSnapshot(invoice));
      return invoice;
    });
  }

  /** DRAFT → OPEN with the next number; a zero total is paid at once, as Stripe does. */
  private async finalizeLocked(invoice: Invoice, resetDueDate: boolean): Promise<void> {
    if (invoice.status !== InvoiceStatus.DRAFT) throw new IllegalInvoiceTransitionError('finalized', invoice.status);
    const before = invoiceSnapshot(invoice);
    const [row] = await this.em.execute<{ last_number: number }[]>(
      `insert into "membership"."invoice_sequence" ("account_id", "mode", "last_number") values (?, ?, 1)
       on conflict ("account_id", "mode") do update set "last_number" = "invoice_sequence"."last_number" + 1
       returning "last_number"`,
      [this.principal.accountId, this.principal.mode],
    );
    invoice.number = `INV-${String(row.last_number).padStart(6, '0')}`;
    invoice.status = InvoiceStatus.OPEN;
    invoice.issuedOn = today();
    if (resetDueDate) invoice.dueOn = addDays(invoice.issuedOn, DEFAULT_DUE_DAYS);
    this.audit.record('invoice', invoice.id, 'invoice.finalized', before, invoiceSnapshot(invoice));
    this.settle(invoice);
    // A zero total is paid at once: that is a payment to tell of too.
    if ((invoice.status as InvoiceStatus) === InvoiceStatus.PAID) await announcePaid(this.em, this.principal, invoice);
  }
}
