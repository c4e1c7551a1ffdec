import { DomainError } from '../../../../core/errors.js';

/** An invoice action its status does not allow (e.g. voiding a paid invoice). */
export class IllegalInvoiceTransitionError extends DomainError {
  constructor(action: string, status: string) {
    super('CONFLICT', `A ${status} invoice cannot be ${action}`, { reason: 'illegal_transition' });
  }
}

/** A payment to an invoice that takes none (draft, paid or void). */
export class InvoiceNotPayableError extends DomainError {
  constructor(status: string) {
    super('CONFLICT', `A ${status} invoice takes no payments`, { param: 'invoiceId', reason: 'invoice_not_payable' });
  }
}

export class InvoiceArgumentNotFoundError extends DomainError {
  constructor(id: string, param: string) {
    super('NOT_FOUND', `No invoice with id "${id}"`, { param, reason: 'invoice_not_found' });
  }
}

export class InvalidInvoiceError extends DomainError {
  constructor(param: string, message: string) {
    super('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
  }
}

/** More than is owed (payments) or refundable (refunds); the Stripe-like 400. */
export class AmountTooLargeError extends DomainError {
  constructor(message: string) {
    super('BAD_USER_INPUT', message, { param: 'amount', reason: 'amount_too_large' });
  }
}
