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

/** An active member renewing before its category's renewal window opens. */
export class RenewalNotDueError extends DomainError {
  constructor(opensOn: string, periodEnd: string) {
    super('CONFLICT', `The membership can be renewed from ${opensOn}: its period ends on ${periodEnd}`, { reason: 'renewal_not_due' });
  }
}

/** A renewal while the member's previous renewal invoice is still owed: one open renewal at a time. */
export class RenewalPendingError extends DomainError {
  constructor(invoiceId: string) {
    super('CONFLICT', `The renewal invoice ${invoiceId} is still open: pay or void it first`, { reason: 'renewal_pending' });
    Object.assign(this.extensions, { existingId: invoiceId });
  }
}

/** A member named by another argument (e.g. an invoice's memberId) that is not there. */
export class MemberArgumentNotFoundError extends DomainError {
  constructor(id: string, param: string) {
    super('NOT_FOUND', `No member with id "${id}"`, { param, reason: 'member_not_found' });
  }
}
