import { registerEnumType } from '../../../shared/type-graphql.js';

/** Stripe's invoice states. */
export enum InvoiceStatus {
  DRAFT = 'draft',
  OPEN = 'open',
  PAID = 'paid',
  VOID = 'void',
  UNCOLLECTIBLE = 'uncollectible',
}

registerEnumType(InvoiceStatus, {
  name: 'InvoiceStatus',
  valuesConfig: {
    DRAFT: { description: 'Editable, unnumbered, not owed; may be deleted.' },
    OPEN: { description: 'Finalised and numbered; owed until paid.' },
    PAID: { description: 'Payments less refunds cover the total.' },
    VOID: { description: 'Cancelled after finalisation; kept, not owed.' },
    UNCOLLECTIBLE: { description: 'Written off as bad debt; can still be paid or voided.' },
  },
});

/** Why an invoice was raised. */
export enum InvoiceKind {
  MANUAL = 'manual',
  MEMBERSHIP = 'membership',
  RENEWAL = 'renewal',
  EVENT = 'event',
}

registerEnumType(InvoiceKind, {
  name: 'InvoiceKind',
  valuesConfig: {
    MEMBERSHIP: { description: "A new member's first period; paying it activates a PENDING member." },
    RENEWAL: { description: 'The period a renewal added; paying it adds the period.' },
    EVENT: { description: "A place at a paid event (attendeeId); paying it confirms the registration." },
  },
});

/** Statuses an invoice may move to by an explicit action; payments and refunds move it too. */
export const INVOICE_ACTIONS = {
  finalize: { from: [InvoiceStatus.DRAFT], to: InvoiceStatus.OPEN },
  void: { from: [InvoiceStatus.OPEN, InvoiceStatus.UNCOLLECTIBLE], to: InvoiceStatus.VOID },
  markUncollectible: { from: [InvoiceStatus.OPEN], to: InvoiceStatus.UNCOLLECTIBLE },
} as const;

/** Invoices that take payments. */
export const PAYABLE: readonly InvoiceStatus[] = [InvoiceStatus.OPEN, InvoiceStatus.UNCOLLECTIBLE];
