import { DomainError } from '../../../core/errors.js';

export class EventCancelledError extends DomainError {
  constructor(id: string) {
    super('CONFLICT', `The event "${id}" is cancelled`, { param: 'id', reason: 'event_cancelled' });
  }
}

export class EventEndedError extends DomainError {
  constructor(id: string) {
    super('CONFLICT', `The event "${id}" has ended`, { param: 'id', reason: 'event_ended' });
  }
}

export class RegistrationClosedError extends DomainError {
  constructor(message: string) {
    super('CONFLICT', message, { param: 'id', reason: 'registration_closed' });
  }
}

export class AlreadyRegisteredError extends DomainError {
  constructor(who: string, param: 'memberId' | 'guestEmail') {
    super('CONFLICT', `${who} is already registered for this event`, { param, reason: 'already_registered' });
  }
}

export class AttendeeNotFoundError extends DomainError {
  constructor(param: 'attendeeId' | 'code', value: string) {
    const what = param === 'code' ? `with code "${value}"` : `with id "${value}"`;
    super('NOT_FOUND', `No attendee ${what} for this event`, { param, reason: 'attendee_not_found' });
  }
}

/** A check-in or cancellation the attendee's status does not allow, e.g. checking in a waitlisted attendee. */
export class AttendeeStatusError extends DomainError {
  constructor(message: string, reason: 'attendee_waitlisted' | 'attendee_cancelled' | 'attendee_checked_in' | 'attendee_payment_pending', param: string) {
    super('CONFLICT', message, { param, reason });
  }
}

/** A guest registering for a paid event: its invoice is made out to a member. */
export class PaidEventMembersOnlyError extends DomainError {
  constructor() {
    super('BAD_USER_INPUT', 'A paid event takes registrations of members (its invoice is made out to one); register the guest as a member first', {
      param: 'guestEmail',
      reason: 'paid_event_members_only',
    });
  }
}

/** A capacity below the places registrations hold: no registered attendee is ever unseated. */
export class CapacityBelowTakenError extends DomainError {
  constructor(taken: number) {
    super('CONFLICT', `${taken} places are taken: the capacity cannot go below that`, { param: 'capacity', reason: 'capacity_below_taken' });
  }
}

/** A price change after registrations were made: they were taken at the old price. */
export class EventHasRegistrationsError extends DomainError {
  constructor(param: string) {
    super('CONFLICT', 'The price and currency change only before the first registration', { param, reason: 'event_has_registrations' });
  }
}
