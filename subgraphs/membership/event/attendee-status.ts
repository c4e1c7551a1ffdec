import { registerEnumType } from '../../shared/type-graphql.js';

/**
 * Where a registration stands. Registered and checked-in attendees hold a place; waitlisted ones
 * wait for one in order; cancelled ones hold nothing and stay listed for the record.
 */
export enum AttendeeStatus {
  REGISTERED = 'registered',
  WAITLISTED = 'waitlisted',
  CANCELLED = 'cancelled',
  CHECKED_IN = 'checked_in',
}

registerEnumType(AttendeeStatus, { name: 'AttendeeStatus' });

/** The statuses that occupy one of the event's places. */
export const HOLDS_A_PLACE = [AttendeeStatus.REGISTERED, AttendeeStatus.CHECKED_IN];
