import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../../core/principal.js';
import { enqueueWebhookEvent } from '../../webhook/webhook-outbox.js';
import type { Invoice } from './invoice.entity.js';

/** An invoice as `invoice.*` webhook deliveries carry it: the GraphQL field names, enum values upper case. */
export function invoiceWebhookData(invoice: Invoice): Record<string, unknown> {
  return {
    id: invoice.id,
    number: invoice.number ?? null,
    memberId: invoice.memberId,
    kind: invoice.kind.toUpperCase(),
    status: invoice.status.toUpperCase(),
    currency: invoice.currency,
    total: invoice.total,
    amountPaid: invoice.amountPaid,
    amountRefunded: invoice.amountRefunded,
    amountRemaining: invoice.amountRemaining,
    periodStart: invoice.periodStart ?? null,
    periodEnd: invoice.periodEnd ?? null,
    attendeeId: invoice.attendeeId ?? null,
    paidAt: invoice.paidAt?.toISOString() ?? null,
  };
}

/** Tells `invoice.paid` endpoints, in the transaction that made the invoice PAID. */
export function announcePaid(em: EntityManager, principal: Principal, invoice: Invoice): Promise<void> {
  return enqueueWebhookEvent(em, principal, 'invoice.paid', { invoice: invoiceWebhookData(invoice) });
}
