import { DomainError } from '../../../core/errors.js';

/** Bids are sealed: nobody but their vendors reads them while the tender is active. */
export class BidsSealedError extends DomainError {
  constructor() {
    super('FORBIDDEN', 'Bids are sealed until the tender period ends; only their count is shown', { reason: 'bids_sealed' });
  }
}

/** A bid placed, amended, withdrawn or confirmed at or after the deadline (by the database clock). */
export class TenderPeriodClosedError extends DomainError {
  constructor(endDate: Date) {
    super('CONFLICT', `The tender period ended at ${endDate.toISOString()}; bids are closed`, { reason: 'tender_period_closed' });
  }
}

export class TenderNotOpenError extends DomainError {
  constructor(status: string) {
    super('CONFLICT', `The tender is ${status}; it takes bids only while active`, { reason: 'tender_not_open' });
  }
}

export class OwnTenderBidError extends DomainError {
  constructor() {
    super('FORBIDDEN', 'A buyer cannot bid on its own tender', { reason: 'own_tender_bid' });
  }
}

export class VendorNotInvitedError extends DomainError {
  constructor() {
    super('FORBIDDEN', 'This selective tender takes bids from invited vendors only', { reason: 'vendor_not_invited' });
  }
}

export class BidExistsError extends DomainError {
  constructor(existingId: string) {
    super('CONFLICT', `This vendor already has bid ${existingId} on this tender and lot; amend or withdraw it`, { reason: 'bid_exists' });
    Object.assign(this.extensions, { existingId });
  }
}

export class BidAboveBudgetError extends DomainError {
  constructor(budget: string, currency: string) {
    super('BAD_USER_INPUT', `The bid exceeds the budget of ${budget} ${currency}`, { param: 'amount', reason: 'bid_above_budget' });
  }
}

export class BidCurrencyError extends DomainError {
  constructor(currency: string) {
    super('BAD_USER_INPUT', `The tender takes bids in ${currency} only`, { param: 'currency', reason: 'bid_currency_mismatch' });
  }
}

export class UnknownLotError extends DomainError {
  constructor(message: string) {
    super('BAD_USER_INPUT', message, { param: 'lotId', reason: 'invalid_lot' });
  }
}

export class BidNotChangeableError extends DomainError {
  constructor(status: string, action: string) {
    super('CONFLICT', `A ${status} bid cannot be ${action}`, { reason: 'bid_not_changeable' });
  }
}
