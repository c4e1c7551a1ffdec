import type { MemberBilling } from '../../member/member-billing.js';
import { InvoiceKind } from './invoice-status.js';
import { InvoiceService } from './invoice.service.js';

/** Members' periods billed as invoices: an open invoice for the category's fee, numbered at once. */
export const periodInvoicing: MemberBilling = {
  async billPeriod(em, principal, { member, category, period, kind }) {
    const invoice = await new InvoiceService(em, principal).createForPeriod(member, category, period, kind === 'renewal' ? InvoiceKind.RENEWAL : InvoiceKind.MEMBERSHIP);
    return invoice.id;
  },
  openRenewal(em, principal, memberId) {
    return new InvoiceService(em, principal).openRenewalOf(memberId);
  },
};
