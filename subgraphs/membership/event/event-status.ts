import { registerEnumType } from '../../shared/type-graphql.js';

/** Where an event stands: only cancellation is stored; "ended" follows from the end time. */
export enum EventStatus {
  SCHEDULED = 'scheduled',
  CANCELLED = 'cancelled',
  ENDED = 'ended',
}

registerEnumType(EventStatus, { name: 'EventStatus' });

/** A cancelled event stays cancelled after its end; any other event has ended once its end has passed. */
export function eventStatusAt(event: { cancelledAt?: Date | null; endsAt: Date }, now = new Date()): EventStatus {
  if (event.cancelledAt) return EventStatus.CANCELLED;
  return event.endsAt.getTime() <= now.getTime() ? EventStatus.ENDED : EventStatus.SCHEDULED;
}
