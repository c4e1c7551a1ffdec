import type { RegistrationBilling } from '../../event/registration-billing.js';
import { InvoiceStatus, PAYABLE } from './invoice-status.js';
import { invoiceSnapshot, InvoiceService } from './invoice.service.js';
import { AuditService } from '../../audit/audit.service.js';

/** Places at paid events billed as invoices: an open invoice for the event's price, numbered at once. */
export const registrationInvoicing: RegistrationBilling = {
  async billRegistration(em, principal, { attendee, event, member, dueAt }) {
    const invoice = await new InvoiceService(em, principal).createForRegistration(member, event, attendee.id, dueAt);
    return invoice.id;
  },

  async releaseRegistration(em, principal, invoiceId) {
    const invoice = await new InvoiceService(em, principal).lock(invoiceId);
    if (invoice.status === InvoiceStatus.PAID) return 'paid';
    if (PAYABLE.includes(invoice.status)) {
      const before = invoiceSnapshot(invoice);
      invoice.status = InvoiceStatus.VOID;
      invoice.voidedAt = new Date();
      new AuditService(em, principal).record('invoice', invoice.id, 'invoice.voided', before, invoiceSnapshot(invoice));
    }
    return 'voided';
  },
};
