import type { EntityManager } from '@mikro-orm/postgresql';
import { addDays } from '../member/member-period.js';
import { AttendeeStatus } from './attendee-status.js';
import type { EventAnalytics } from './event-analytics.js';
import type { Event } from './event.entity.js';
import { EventStatus, eventStatusAt } from './event-status.js';
import type { RegistrationDay } from './registration-day.js';

interface StatusCount {
  event_id: string;
  status: AttendeeStatus;
  n: number;
}

interface DayCount {
  event_id: string;
  day: string;
  n: number;
}

/**
 * Analytics for many events in two aggregate statements, whatever their number: counts by status,
 * and registrations per day in each event's own time zone. The events are already scoped.
 */
export async function analyticsFor(em: EntityManager, events: readonly Event[], now = new Date()): Promise<EventAnalytics[]> {
  if (!events.length) return [];
  const ids = events.map((e) => e.id);
  const connection = em.getConnection();
  const [counts, days] = await Promise.all([
    connection.execute<StatusCount[]>(
      `select event_id, status, count(*)::int as n from membership.event_attendee where event_id in (?) group by event_id, status`,
      [ids],
    ),
    connection.execute<DayCount[]>(
      `select a.event_id, to_char((a.created_at at time zone e.time_zone)::date, 'YYYY-MM-DD') as day, count(*)::int as n
         from membership.event_attendee a join membership.event e on e.id = a.event_id
        where a.event_id in (?) group by 1, 2 order by 1, 2`,
      [ids],
    ),
  ]);
  return events.map((event) => {
    const count = (status: AttendeeStatus) =>
      counts.find((c) => c.event_id === event.id && c.status === status)?.n ?? 0;
    const checkedIn = count(AttendeeStatus.CHECKED_IN);
    const registered = count(AttendeeStatus.REGISTERED) + checkedIn;
    const pendingPayment = count(AttendeeStatus.PENDING);
    return {
      registered,
      checkedIn,
      pendingPayment,
      waitlistLength: count(AttendeeStatus.WAITLISTED),
      cancelled: count(AttendeeStatus.CANCELLED),
      capacityUsed: event.capacity ? (registered + pendingPayment) / event.capacity : null,
      checkInRate: registered ? checkedIn / registered : null,
      noShows: eventStatusAt(event, now) === EventStatus.ENDED ? registered - checkedIn : null,
      registrationsOverTime: series(days.filter((d) => d.event_id === event.id)),
    };
  });
}

/** Every day from the first to the last, days without registrations included as 0. */
function series(days: DayCount[]): RegistrationDay[] {
  if (!days.length) return [];
  const byDay = new Map(days.map((d) => [d.day, d.n]));
  const result: RegistrationDay[] = [];
  let cumulative = 0;
  for (let day = days[0].day; day <= days[days.length - 1].day; day = addDays(day, 1)) {
    const registrations = byDay.get(day) ?? 0;
    cumulative += registrations;
    result.push({ date: day, registrations, cumulative });
  }
  return result;
}
