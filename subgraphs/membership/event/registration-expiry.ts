import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mode, Principal } from '../../../core/principal.js';
import { AttendeeService } from './attendee.service.js';
import type { RegistrationBilling } from './registration-billing.js';

/** Who the clock acts as in an account's audit trail. */
export const CLOCK_KEY_ID = 'system:membership-clock';

/** The principal of the clock's work in one account and mode. */
export function clockPrincipal(accountId: string, mode: Mode): Principal {
  return { accountId, account: accountId, keyId: CLOCK_KEY_ID, kind: mode, mode };
}

/**
 * Releases the places of unpaid registrations past their deadline, event by event (each under its
 * event's lock, as registrations are), and hands them to the waitlists. Several instances at once
 * take turns on each event's lock and the later finds nothing left. Answers the events looked at
 * (at most `batch`) and the places released.
 */
export async function releaseOverdueRegistrations(em: EntityManager, billing: RegistrationBilling, now = new Date(), batch = 100): Promise<{ events: number; released: number }> {
  const events = await em.getConnection().execute<{ event_id: string; account_id: string; mode: Mode }[]>(
    `select distinct "event_id", "account_id", "mode" from "membership"."event_attendee"
      where "status" = 'pending' and "payment_due_at" <= ? limit ?`,
    [now, batch],
  );
  let released = 0;
  for (const row of events) {
    released += await new AttendeeService(em.fork(), clockPrincipal(row.account_id, row.mode), billing).releaseOverdue(row.event_id, now);
  }
  return { events: events.length, released };
}
