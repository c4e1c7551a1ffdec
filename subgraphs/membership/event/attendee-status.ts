import { registerEnumType } from '../../shared/type-graphql.js';

/**
 * Where a registration stands. Registered and checked-in attendees hold a place, and so does a
 * registration for a paid event while its invoice is awaited (pending, until `paymentDueAt`);
 * waitlisted ones wait for one in order; cancelled ones hold nothing and stay listed for the record.
 */
export enum AttendeeStatus {
  PENDING = 'pending',
  REGISTERED = 'registered',
  WAITLISTED = 'waitlisted',
  CANCELLED = 'cancelled',
  CHECKED_IN = 'checked_in',
}

registerEnumType(AttendeeStatus, {
  name: 'AttendeeStatus',
  valuesConfig: {
    PENDING: { description: "A paid event's registration holding a place until its invoice is paid (then REGISTERED) or paymentDueAt passes (then CANCELLED, and the place goes to the waitlist)." },
  },
});

/** The statuses that occupy one of the event's places. */
export const HOLDS_A_PLACE = [AttendeeStatus.PENDING, AttendeeStatus.REGISTERED, AttendeeStatus.CHECKED_IN];
