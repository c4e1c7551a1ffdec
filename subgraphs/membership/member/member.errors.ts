import { DomainError } from '../../../core/errors.js';

export class MemberEmailTakenError extends DomainError {
  constructor(email: string) {
    super('CONFLICT', `A member with email "${email}" already exists`, { param: 'email', reason: 'member_email_taken' });
  }
}

/** A lifecycle action the member's current status does not allow. */
export class IllegalMemberTransitionError extends DomainError {
  constructor(action: string, status: string) {
    super('CONFLICT', `A ${status.toLowerCase()} member cannot be ${action}`, { reason: 'illegal_transition' });
  }
}

export class LifetimeRenewalError extends DomainError {
  constructor() {
    super('CONFLICT', 'A lifetime membership has no end and cannot be renewed', { reason: 'lifetime_membership' });
  }
}

/** A renewal whose period would end after 9999-12-31, the last date the API's date format carries. */
export class RenewalOutOfRangeError extends DomainError {
  constructor() {
    super('CONFLICT', 'Renewing would end the membership after 9999-12-31', { reason: 'renewal_out_of_range' });
  }
}

/** A member named by another argument (e.g. an invoice's memberId) that is not there. */
export class MemberArgumentNotFoundError extends DomainError {
  constructor(id: string, param: string) {
    super('NOT_FOUND', `No member with id "${id}"`, { param, reason: 'member_not_found' });
  }
}
