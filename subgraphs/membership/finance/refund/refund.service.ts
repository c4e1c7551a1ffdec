import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../../core/principal.js';
import { DomainError } from '../../../../core/errors.js';
import { paginate, UUID, type Page } from '../../../shared/pagination.js';
import { AuditService } from '../../audit/audit.service.js';
import { AmountTooLargeError } from '../invoice/invoice.errors.js';
import { InvoiceStatus } from '../invoice/invoice-status.js';
import { InvoiceService } from '../invoice/invoice.service.js';
import { followReopenedInvoice } from '../invoice/member-standing.js';
import { announceRefund } from './refund-webhooks.js';
import { Payment } from '../payment/payment.entity.js';
import { PaymentArgumentNotFoundError } from '../payment/payment.errors.js';
import { PaymentService, paymentSnapshot } from '../payment/payment.service.js';
import { Refund } from './refund.entity.js';
import type { CreateRefundArgs, RefundsArgs } from './refund.inputs.js';

/** Refunds of the principal's account and mode. */
export class RefundService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  list(args: RefundsArgs): Promise<Page<Refund>> {
    const where: FilterQuery<Refund>[] = [this.scope];
    if (args.paymentId) {
      if (!UUID.test(args.paymentId)) return Promise.resolve({ data: [], hasMore: false, nextCursor: null });
      where.push({ paymentId: args.paymentId });
    }
    return paginate(this.em, Refund, where, args);
  }

  async find(id: string): Promise<Refund | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Refund, { id, ...this.scope });
  }

  /**
   * Refunds (part of) a payment. The invoice row is locked first, then the payment (the order
   * payments use too, so the two never deadlock); concurrent refunds queue on the lock and each
   * sees the others' sum, so together they never exceed the payment. The invoice follows: a paid
   * invoice that is no longer covered is OPEN again, and so is what it paid for (a renewal's
   * period is taken back, a first period's member is PENDING again).
   */
  async create(args: CreateRefundArgs): Promise<Refund> {
    return this.em.transactional(async (em) => {
      const unlocked = UUID.test(args.paymentId) ? await em.findOne(Payment, { id: args.paymentId, ...this.scope }) : null;
      if (!unlocked) throw new PaymentArgumentNotFoundError(args.paymentId);
      const invoices = new InvoiceService(em, this.principal);
      const invoice = await invoices.lock(unlocked.invoiceId);
      const payment = (await new PaymentService(em, this.principal).lock(args.paymentId))!;
      const refundable = payment.amount - payment.amountRefunded;
      if (refundable === 0) {
        throw new DomainError('CONFLICT', 'The payment is refunded in full already', { param: 'paymentId', reason: 'payment_fully_refunded' });
      }
      const amount = args.amount ?? refundable;
      if (amount > refundable) throw new AmountTooLargeError(`At most ${refundable} of the payment can still be refunded`);
      const before = paymentSnapshot(payment);
      const refund = em.create(Refund, {
        ...this.scope,
        paymentId: payment.id,
        invoiceId: invoice.id,
        memberId: payment.memberId,
        categoryId: payment.categoryId ?? null,
        amount,
        currency: payment.currency,
        reason: args.reason ?? null,
      });
      payment.amountRefunded += amount;
      invoice.amountRefunded += amount;
      const audit = new AuditService(em, this.principal);
      audit.record('refund', refund.id, 'refund.created', null, { amount, currency: refund.currency, paymentId: payment.id, reason: refund.reason });
      audit.record('payment', payment.id, 'payment.refunded', before, paymentSnapshot(payment));
      const wasPaid = invoice.status === InvoiceStatus.PAID;
      invoices.settle(invoice);
      await announceRefund(em, this.principal, invoice, refund);
      if (wasPaid) await followReopenedInvoice(em, this.principal, invoice);
      return refund;
    });
  }
}
