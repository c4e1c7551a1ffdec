import { DomainError } from '../../../core/errors.js';

/** Something only the tender's buyer may do. */
export class NotTenderBuyerError extends DomainError {
  constructor(action: string) {
    super('FORBIDDEN', `Only the tender's buyer may ${action}`, { reason: 'not_tender_buyer' });
  }
}

/** A tender period that is not in the future (by the database clock) or not after its start. */
export class InvalidTenderPeriodError extends DomainError {
  constructor(message: string) {
    super('BAD_USER_INPUT', message, { param: 'tenderPeriod', reason: 'invalid_tender_period' });
  }
}

export class InvalidCriteriaError extends DomainError {
  constructor(message: string) {
    super('BAD_USER_INPUT', message, { param: 'weights', reason: 'invalid_award_criteria' });
  }
}

export class InvalidLotsError extends DomainError {
  constructor(message: string) {
    super('BAD_USER_INPUT', message, { param: 'lots', reason: 'invalid_lots' });
  }
}

/** Terms (or invitations) changed on a tender that is no longer a draft or active. */
export class TenderNotEditableError extends DomainError {
  constructor(status: string) {
    super('CONFLICT', `A ${status} tender cannot be changed`, { reason: 'tender_not_editable' });
  }
}

/** An invitation naming no vendor of the caller's mode. */
export class UnknownVendorError extends DomainError {
  constructor(ids: readonly string[]) {
    super('BAD_USER_INPUT', `No vendor with id ${ids.join(', ')}`, { param: 'invitedVendorIds', reason: 'unknown_vendor' });
  }
}
