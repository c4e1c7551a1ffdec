import { LockMode, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../../core/principal.js';
import { DomainError } from '../../../../core/errors.js';
import { paginate, UUID, type Page } from '../../../shared/pagination.js';
import { AuditService } from '../../audit/audit.service.js';
import { AmountTooLargeError, InvoiceArgumentNotFoundError, InvoiceNotPayableError } from '../invoice/invoice.errors.js';
import { InvoiceStatus, PAYABLE } from '../invoice/invoice-status.js';
import { announcePaid } from '../invoice/invoice-webhooks.js';
import { followPaidInvoice } from '../invoice/member-standing.js';
import { InvoiceService } from '../invoice/invoice.service.js';
import { Payment } from './payment.entity.js';
import type { CreatePaymentArgs, PaymentsArgs } from './payment.inputs.js';

export function paymentSnapshot(p: Payment): Record<string, unknown> {
  return { amount: p.amount, currency: p.currency, method: p.method, amountRefunded: p.amountRefunded, invoiceId: p.invoiceId };
}

/** Payments of the principal's account and mode. */
export class PaymentService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  list(args: PaymentsArgs): Promise<Page<Payment>> {
    const where: FilterQuery<Payment>[] = [this.scope];
    for (const key of ['invoiceId', 'memberId'] as const) {
      const id = args[key];
      if (!id) continue;
      if (!UUID.test(id)) return Promise.resolve({ data: [], hasMore: false, nextCursor: null });
      where.push({ [key]: id });
    }
    return paginate(this.em, Payment, where, args);
  }

  async find(id: string): Promise<Payment | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Payment, { id, ...this.scope });
  }

  /** The payment, row-locked for the caller's transaction. */
  async lock(id: string): Promise<Payment | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Payment, { id, ...this.scope }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  }

  /**
   * Records a payment under the invoice's row lock, so concurrent payments see each other:
   * together they never exceed what is owed. Paying the rest makes the invoice PAID, and paying
   * a new member's first invoice activates the member, and paying a renewal adds its period.
   */
  async create(args: CreatePaymentArgs): Promise<Payment> {
    return this.em.transactional(async (em) => {
      const invoices = new InvoiceService(em, this.principal);
      const invoice = await invoices.lock(args.invoiceId, () => new InvoiceArgumentNotFoundError(args.invoiceId, 'invoiceId'));
      if (!PAYABLE.includes(invoice.status)) throw new InvoiceNotPayableError(invoice.status);
      if (args.currency && args.currency.toUpperCase() !== invoice.currency) {
        throw new DomainError('BAD_USER_INPUT', `The invoice is in ${invoice.currency}`, { param: 'currency', reason: 'currency_mismatch' });
      }
      if (args.amount > invoice.unpaid) {
        throw new AmountTooLargeError(`The invoice owes ${invoice.unpaid}; a payment of ${args.amount} is more`);
      }
      const payment = em.create(Payment, {
        ...this.scope,
        invoiceId: invoice.id,
        memberId: invoice.memberId,
        categoryId: invoice.categoryId ?? null,
        amount: args.amount,
        currency: invoice.currency,
        method: args.method,
        reference: args.reference ?? null,
        receivedAt: args.receivedAt ?? new Date(),
      });
      invoice.amountPaid += args.amount;
      new AuditService(em, this.principal).record('payment', payment.id, 'payment.created', null, paymentSnapshot(payment));
      const wasPaid = invoice.status === InvoiceStatus.PAID;
      invoices.settle(invoice);
      if (!wasPaid && invoice.status === InvoiceStatus.PAID) await announcePaid(em, this.principal, invoice);
      await followPaidInvoice(em, this.principal, invoice);
      return payment;
    });
  }
}
