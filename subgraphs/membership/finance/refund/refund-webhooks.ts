import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../../core/principal.js';
import { enqueueWebhookEvent } from '../../webhook/webhook-outbox.js';
import type { Invoice } from '../invoice/invoice.entity.js';
import { invoiceWebhookData } from '../invoice/invoice-webhooks.js';
import type { Refund } from './refund.entity.js';

/** Tells `invoice.refunded` endpoints of a refund, with the invoice as the refund left it, in the refund's transaction. */
export function announceRefund(em: EntityManager, principal: Principal, invoice: Invoice, refund: Refund): Promise<void> {
  return enqueueWebhookEvent(em, principal, 'invoice.refunded', {
    invoice: invoiceWebhookData(invoice),
    refund: { id: refund.id, paymentId: refund.paymentId, amount: refund.amount, currency: refund.currency, reason: refund.reason ?? null },
  });
}
