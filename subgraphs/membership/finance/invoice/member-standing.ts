import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../../core/principal.js';
import { AttendeeService } from '../../event/attendee.service.js';
import { MemberService } from '../../member/member.service.js';
import type { Invoice } from './invoice.entity.js';
import { InvoiceKind, InvoiceStatus } from './invoice-status.js';

/*
 * A member's standing follows the invoice that pays for it: a first period is active, a
 * renewal's period and a paid event's place are held exactly while its invoice is PAID. Both functions run in the transaction
 * that locked the invoice (payments and refunds lock it first, then the member), so whatever order
 * payments and refunds arrive in, the member ends as the invoice does.
 */

/** After the invoice became PAID: the first invoice activates a PENDING member, a renewal adds its period, an event's confirms the registration. */
export async function followPaidInvoice(em: EntityManager, principal: Principal, invoice: Invoice): Promise<void> {
  if (invoice.status !== InvoiceStatus.PAID) return;
  if (invoice.kind === InvoiceKind.EVENT && invoice.attendeeId) await new AttendeeService(em, principal).confirmPaid(invoice.attendeeId);
  const members = new MemberService(em, principal);
  if (invoice.kind === InvoiceKind.MEMBERSHIP) await members.activateOnPayment(invoice.memberId);
  if (invoice.kind === InvoiceKind.RENEWAL && invoice.periodStart) {
    const replaced = await members.applyPaidRenewal(invoice.memberId, { periodStart: invoice.periodStart, periodEnd: invoice.periodEnd ?? null }, invoice.id);
    if (replaced) Object.assign(invoice, { replacedPeriodStart: replaced.periodStart, replacedPeriodEnd: replaced.periodEnd });
  }
}

/** After a refund reopened a PAID invoice: the member returns to PENDING, or to the period the renewal replaced; a registration to PENDING. */
export async function followReopenedInvoice(em: EntityManager, principal: Principal, invoice: Invoice): Promise<void> {
  if (invoice.status === InvoiceStatus.PAID) return;
  if (invoice.kind === InvoiceKind.EVENT && invoice.attendeeId) await new AttendeeService(em, principal).reopenOnRefund(invoice.attendeeId);
  const members = new MemberService(em, principal);
  if (invoice.kind === InvoiceKind.MEMBERSHIP) await members.deactivateOnRefund(invoice.memberId, invoice.id);
  if (invoice.kind === InvoiceKind.RENEWAL && invoice.periodStart && invoice.replacedPeriodStart) {
    const period = { periodStart: invoice.periodStart, periodEnd: invoice.periodEnd ?? null };
    const replaced = { periodStart: invoice.replacedPeriodStart, periodEnd: invoice.replacedPeriodEnd ?? null };
    await members.revokeRenewal(invoice.memberId, period, replaced, invoice.id);
    Object.assign(invoice, { replacedPeriodStart: null, replacedPeriodEnd: null });
  }
}
