import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../../core/principal.js';
import { MemberService } from '../../member/member.service.js';
import type { Invoice } from './invoice.entity.js';
import { InvoiceKind, InvoiceStatus } from './invoice-status.js';

/**
 * Moves the member after its membership or renewal invoice became PAID, in the transaction that
 * locked the invoice: the first invoice activates a PENDING member, a renewal adds its period.
 */
export async function followPaidInvoice(em: EntityManager, principal: Principal, invoice: Invoice): Promise<void> {
  if (invoice.status !== InvoiceStatus.PAID) return;
  const members = new MemberService(em, principal);
  if (invoice.kind === InvoiceKind.MEMBERSHIP) await members.activateOnPayment(invoice.memberId);
  if (invoice.kind === InvoiceKind.RENEWAL && invoice.periodStart) {
    await members.applyPaidRenewal(invoice.memberId, { periodStart: invoice.periodStart, periodEnd: invoice.periodEnd ?? null }, invoice.id);
  }
}
