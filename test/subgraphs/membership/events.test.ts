import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor, run } from '../../support/subgraph-harness.js';

let subgraph: Subgraph;
let testbed: MembershipTestbed;
const statements: string[] = [];

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph({ onQuery: (sql) => statements.push(sql) }));
});

afterAll(async () => {
  await testbed?.close();
});

interface AnalyticsView {
  registered: number;
  checkedIn: number;
  waitlistLength: number;
  cancelled: number;
  capacityUsed: number | null;
  checkInRate: number | null;
  noShows: number | null;
  registrationsOverTime: { date: string; registrations: number; cumulative: number }[];
}

interface EventView {
  id: string;
  title: string;
  description: string | null;
  startsAt: string;
  endsAt: string;
  startsAtLocal: string;
  endsAtLocal: string;
  timeZone: string;
  location: string | null;
  capacity: number | null;
  registrationOpensAt: string | null;
  registrationClosesAt: string;
  registrationOpen: boolean;
  price: number;
  currency: string | null;
  status: 'SCHEDULED' | 'CANCELLED' | 'ENDED';
  cancelledAt: string | null;
  livemode: boolean;
  analytics: AnalyticsView;
}

interface AttendeeView {
  id: string;
  eventId: string;
  memberId: string | null;
  member: { id: string; name: string } | null;
  guest: boolean;
  name: string;
  email: string;
  status: 'REGISTERED' | 'WAITLISTED' | 'CANCELLED' | 'CHECKED_IN';
  waitlistPosition: number | null;
  code: string | null;
  createdAt: string;
  promotedAt: string | null;
  checkedInAt: string | null;
  cancelledAt: string | null;
  livemode: boolean;
}

const ANALYTICS = 'analytics { registered checkedIn waitlistLength cancelled capacityUsed checkInRate noShows registrationsOverTime { date registrations cumulative } }';
const EVENT_FIELDS = `id title description startsAt endsAt startsAtLocal endsAtLocal timeZone location capacity registrationOpensAt
  registrationClosesAt registrationOpen price currency status cancelledAt livemode ${ANALYTICS}`;
const ATTENDEE_FIELDS = `id eventId memberId member { id name } guest name email status waitlistPosition code createdAt promotedAt
  checkedInAt cancelledAt livemode`;

const CREATE = `mutation($title: String!, $description: String, $startsAt: DateTime!, $endsAt: DateTime!, $timeZone: String!,
  $location: String, $capacity: Int, $registrationOpensAt: DateTime, $registrationClosesAt: DateTime, $price: Int, $currency: String) {
  createEvent(title: $title, description: $description, startsAt: $startsAt, endsAt: $endsAt, timeZone: $timeZone, location: $location,
    capacity: $capacity, registrationOpensAt: $registrationOpensAt, registrationClosesAt: $registrationClosesAt, price: $price,
    currency: $currency) { ${EVENT_FIELDS} }
}`;
const GET = `query($id: ID!) { event(id: $id) { ${EVENT_FIELDS} } }`;
const LIST = `query($status: EventStatus, $startsAfter: DateTime, $startsBefore: DateTime, $limit: Int, $after: String) {
  events(status: $status, startsAfter: $startsAfter, startsBefore: $startsBefore, limit: $limit, after: $after) {
    data { ${EVENT_FIELDS} } hasMore nextCursor }
}`;
const CANCEL_EVENT = `mutation($id: ID!) { cancelEvent(id: $id) { ${EVENT_FIELDS} } }`;
const REGISTER = `mutation($id: ID!, $memberId: ID, $guestName: String, $guestEmail: String) {
  registerForEvent(id: $id, memberId: $memberId, guestName: $guestName, guestEmail: $guestEmail) { ${ATTENDEE_FIELDS} }
}`;
const CANCEL_REGISTRATION = `mutation($id: ID!, $attendeeId: ID!) {
  cancelRegistration(id: $id, attendeeId: $attendeeId) { ${ATTENDEE_FIELDS} }
}`;
const CHECK_IN = `mutation($id: ID!, $attendeeId: ID, $code: String) {
  checkInAttendee(id: $id, attendeeId: $attendeeId, code: $code) { alreadyCheckedIn checkedInAt attendee { ${ATTENDEE_FIELDS} } }
}`;
const ATTENDEES = `query($id: ID!, $status: AttendeeStatus, $search: String, $guest: Boolean, $limit: Int, $after: String) {
  eventAttendees(id: $id, status: $status, search: $search, guest: $guest, limit: $limit, after: $after) {
    data { ${ATTENDEE_FIELDS} } hasMore nextCursor }
}`;
const CREATE_MEMBER = `mutation($name: String!, $email: String!) { createMember(name: $name, email: $email) { id name email } }`;

const UNKNOWN_ID = '00000000-0000-4000-8000-ffffffffffff';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The data as a client reads it off the wire (scalars serialised, e.g. dates as strings). */
function ok<T>(result: ExecutionResult<T>): T {
  expect(result.errors).toBeUndefined();
  return JSON.parse(JSON.stringify(result.data)) as T;
}

function firstError(result: ExecutionResult): GraphQLFormattedError {
  expect(result.errors?.length, 'expected a GraphQL error').toBeGreaterThan(0);
  return result.errors![0];
}

function expectError(result: ExecutionResult, code: string, reason: string, param?: string): void {
  const error = firstError(result);
  expect(error.extensions).toMatchObject({ code, reason, ...(param ? { param } : {}) });
}

function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return subgraph.orm.em.getConnection().execute<T[]>(query, params);
}

function inHours(hours: number): string {
  return new Date(Date.now() + hours * HOUR).toISOString();
}

async function createEvent(principal: Principal, args: Record<string, unknown> = {}): Promise<EventView> {
  const result = await run<{ createEvent: EventView }>(subgraph, principal, CREATE, {
    title: 'Annual meeting',
    startsAt: inHours(48),
    endsAt: inHours(50),
    timeZone: 'Europe/Berlin',
    ...args,
  });
  return ok(result).createEvent;
}

function register(principal: Principal, args: Record<string, unknown>) {
  return run<{ registerForEvent: AttendeeView }>(subgraph, principal, REGISTER, args);
}

let guestCounter = 0;
async function registerGuest(principal: Principal, eventId: string, name = `Guest ${++guestCounter}`): Promise<AttendeeView> {
  return ok(await register(principal, { id: eventId, guestName: name, guestEmail: `guest.${++guestCounter}@example.org` })).registerForEvent;
}

async function createMember(principal: Principal, name: string): Promise<{ id: string; name: string; email: string }> {
  const email = `${name.toLowerCase().replace(/\W+/g, '.')}.${++guestCounter}@example.org`;
  return ok(await run<{ createMember: { id: string; name: string; email: string } }>(subgraph, principal, CREATE_MEMBER, { name, email }))
    .createMember;
}

function checkIn(principal: Principal, args: Record<string, unknown>) {
  return run<{ checkInAttendee: { alreadyCheckedIn: boolean; checkedInAt: string; attendee: AttendeeView } }>(subgraph, principal, CHECK_IN, args);
}

function cancelRegistration(principal: Principal, id: string, attendeeId: string) {
  return run<{ cancelRegistration: AttendeeView }>(subgraph, principal, CANCEL_REGISTRATION, { id, attendeeId });
}

async function attendees(principal: Principal, args: Record<string, unknown>) {
  return ok(await run<{ eventAttendees: { data: AttendeeView[]; hasMore: boolean; nextCursor: string | null } | null }>(subgraph, principal, ATTENDEES, args))
    .eventAttendees;
}

async function allAttendees(principal: Principal, id: string, args: Record<string, unknown> = {}): Promise<AttendeeView[]> {
  const all: AttendeeView[] = [];
  let after: string | null = null;
  do {
    const page: { data: AttendeeView[]; nextCursor: string | null } = (await attendees(principal, { id, limit: 100, after, ...args }))!;
    all.push(...page.data);
    after = page.nextCursor;
  } while (after);
  return all;
}

async function getEvent(principal: Principal, id: string): Promise<EventView | null> {
  return ok(await run<{ event: EventView | null }>(subgraph, principal, GET, { id })).event;
}

describe('createEvent', () => {
  it('creates an event with start and end as instants, its IANA zone, local times, capacity, window and price', async () => {
    const principal = principalFor();
    const event = await createEvent(principal, {
      title: '  Winter gala ',
      description: 'Black tie',
      startsAt: '2030-12-01T19:00:00+01:00',
      endsAt: '2030-12-01T23:30:00+01:00',
      timeZone: 'europe/berlin',
      location: ' Town hall ',
      capacity: 120,
      registrationOpensAt: '2030-10-01T09:00:00+02:00',
      registrationClosesAt: '2030-11-30T12:00:00+01:00',
      price: 4500,
      currency: 'eur',
    });
    expect(event).toMatchObject({
      title: 'Winter gala',
      description: 'Black tie',
      startsAt: '2030-12-01T18:00:00.000Z',
      endsAt: '2030-12-01T22:30:00.000Z',
      startsAtLocal: '2030-12-01T19:00:00+01:00',
      endsAtLocal: '2030-12-01T23:30:00+01:00',
      timeZone: 'Europe/Berlin',
      location: 'Town hall',
      capacity: 120,
      registrationOpensAt: '2030-10-01T07:00:00.000Z',
      registrationClosesAt: '2030-11-30T11:00:00.000Z',
      registrationOpen: false,
      price: 4500,
      currency: 'EUR',
      status: 'SCHEDULED',
      cancelledAt: null,
      livemode: true,
    });
    expect(event.analytics).toEqual({
      registered: 0,
      checkedIn: 0,
      waitlistLength: 0,
      cancelled: 0,
      capacityUsed: 0,
      checkInRate: null,
      noShows: null,
      registrationsOverTime: [],
    });
    const [row] = await sql<Record<string, unknown>>('select * from membership.event where id = ?', [event.id]);
    expect(row).toMatchObject({ account_id: principal.accountId, mode: 'live', time_zone: 'Europe/Berlin', capacity: 120, price: 4500 });
    expect(new Date(row.starts_at as string).toISOString()).toBe('2030-12-01T18:00:00.000Z');
  });

  it('defaults to unlimited capacity, free, open at once and closing at the start', async () => {
    const startsAt = inHours(24);
    const event = await createEvent(principalFor(), { startsAt, endsAt: inHours(26), timeZone: 'UTC' });
    expect(event).toMatchObject({
      capacity: null,
      price: 0,
      currency: null,
      registrationOpensAt: null,
      registrationClosesAt: startsAt,
      registrationOpen: true,
      timeZone: 'UTC',
    });
    expect(event.analytics.capacityUsed).toBeNull();
  });

  it.each([
    [{ timeZone: 'Mars/Olympus_Mons' }, 'timeZone'],
    [{ timeZone: '+01:00' }, 'timeZone'],
    [{ endsAt: inHours(47) }, 'endsAt'],
    [{ registrationClosesAt: inHours(51) }, 'registrationClosesAt'],
    [{ registrationOpensAt: inHours(47), registrationClosesAt: inHours(46) }, 'registrationOpensAt'],
    [{ price: 1000 }, 'currency'],
    [{ price: 1000, currency: 'EURO' }, 'currency'],
    [{ price: -1 }, 'price'],
    [{ capacity: 0 }, 'capacity'],
    [{ title: '   ' }, 'title'],
  ])('refuses %j as bad input naming %s', async (args, param) => {
    const result = await run(subgraph, principalFor(), CREATE, {
      title: 'T',
      startsAt: inHours(48),
      endsAt: inHours(50),
      timeZone: 'Europe/Berlin',
      ...args,
    });
    expect(firstError(result).extensions).toMatchObject({ code: 'BAD_USER_INPUT', param });
  });

  it('refuses a start without an offset: an instant needs one', async () => {
    const result = await run(subgraph, principalFor(), CREATE, {
      title: 'T',
      startsAt: '2030-12-01T19:00:00',
      endsAt: '2030-12-01T23:00:00+01:00',
      timeZone: 'Europe/Berlin',
    });
    expect(firstError(result).message).toMatch(/startsAt/);
  });
});

describe('events and event', () => {
  it('keeps events to their account and mode', async () => {
    const owner = principalFor();
    const event = await createEvent(owner);
    expect(await getEvent(principalFor(), event.id)).toBeNull();
    expect(await getEvent({ ...owner, kind: 'test', mode: 'test' }, event.id)).toBeNull();
    expect(await getEvent(owner, 'not-a-uuid')).toBeNull();
    expect((await getEvent(owner, event.id))!.id).toBe(event.id);
    const sandbox = await createEvent({ ...owner, kind: 'test', mode: 'test' });
    expect(sandbox.livemode).toBe(false);
    const live = ok(await run<{ events: { data: EventView[] } }>(subgraph, owner, LIST)).events.data;
    expect(live.map((e) => e.id)).toEqual([event.id]);
  });

  it('pages newest first and filters by status and start', async () => {
    const principal = principalFor();
    const early = await createEvent(principal, { startsAt: inHours(10), endsAt: inHours(11) });
    const late = await createEvent(principal, { startsAt: inHours(100), endsAt: inHours(101) });
    const cancelled = await createEvent(principal);
    ok(await run(subgraph, principal, CANCEL_EVENT, { id: cancelled.id }));
    const ended = await createEvent(principal);
    await sql(`update membership.event set starts_at = now() - interval '3 hours', ends_at = now() - interval '1 hour', registration_closes_at = now() - interval '3 hours' where id = ?`, [ended.id]);

    const list = (args: Record<string, unknown>) => run<{ events: { data: EventView[]; hasMore: boolean; nextCursor: string | null } }>(subgraph, principal, LIST, args);
    const first = ok(await list({ limit: 3 })).events;
    expect(first.hasMore).toBe(true);
    const second = ok(await list({ limit: 3, after: first.nextCursor })).events;
    expect([...first.data, ...second.data].map((e) => e.id)).toEqual([ended.id, cancelled.id, late.id, early.id]);
    expect(second).toMatchObject({ hasMore: false, nextCursor: null });

    expect(ok(await list({ status: 'CANCELLED' })).events.data.map((e) => e.id)).toEqual([cancelled.id]);
    expect(ok(await list({ status: 'ENDED' })).events.data.map((e) => [e.id, e.status])).toEqual([[ended.id, 'ENDED']]);
    expect(ok(await list({ status: 'SCHEDULED' })).events.data.map((e) => e.id)).toEqual([late.id, early.id]);
    expect(ok(await list({ startsAfter: inHours(50) })).events.data.map((e) => e.id)).toEqual([late.id]);
    expect(ok(await list({ startsBefore: inHours(20) })).events.data.map((e) => e.id)).toEqual([ended.id, early.id]);
  });

  it('answers the analytics of a whole page in a fixed number of statements', async () => {
    const principal = principalFor();
    for (let i = 0; i < 6; i++) {
      const event = await createEvent(principal);
      await registerGuest(principal, event.id);
    }
    statements.length = 0;
    const page = ok(await run<{ events: { data: EventView[] } }>(subgraph, principal, LIST)).events.data;
    expect(page).toHaveLength(6);
    expect(page.every((e) => e.analytics.registered === 1)).toBe(true);
    const selects = statements.filter((s) => /\bselect\b/i.test(s));
    expect(selects.length).toBeLessThanOrEqual(3);
  });
});

describe('cancelEvent', () => {
  it('cancels once, answers the same event on a repeat, and refuses an unknown or ended event', async () => {
    const principal = principalFor();
    const event = await createEvent(principal);
    const cancelled = ok(await run<{ cancelEvent: EventView }>(subgraph, principal, CANCEL_EVENT, { id: event.id })).cancelEvent;
    expect(cancelled).toMatchObject({ status: 'CANCELLED', registrationOpen: false });
    expect(cancelled.cancelledAt).not.toBeNull();
    const again = ok(await run<{ cancelEvent: EventView }>(subgraph, principal, CANCEL_EVENT, { id: event.id })).cancelEvent;
    expect(again.cancelledAt).toBe(cancelled.cancelledAt);
    expectError(await run(subgraph, principal, CANCEL_EVENT, { id: UNKNOWN_ID }), 'NOT_FOUND', 'event_not_found', 'id');
    expectError(await run(subgraph, principalFor(), CANCEL_EVENT, { id: event.id }), 'NOT_FOUND', 'event_not_found', 'id');
    const ended = await createEvent(principal);
    await sql(`update membership.event set ends_at = now() - interval '1 minute' where id = ?`, [ended.id]);
    expectError(await run(subgraph, principal, CANCEL_EVENT, { id: ended.id }), 'CONFLICT', 'event_ended');
  });
});

describe('registerForEvent', () => {
  it('registers a guest with a one-time check-in code, stored only as a hash', async () => {
    const principal = principalFor();
    const event = await createEvent(principal, { capacity: 5 });
    const attendee = ok(await register(principal, { id: event.id, guestName: ' Ann Guest ', guestEmail: 'Ann@Example.ORG' })).registerForEvent;
    expect(attendee).toMatchObject({
      eventId: event.id,
      memberId: null,
      member: null,
      guest: true,
      name: 'Ann Guest',
      email: 'ann@example.org',
      status: 'REGISTERED',
      waitlistPosition: null,
      livemode: true,
    });
    expect(attendee.code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    const [row] = await sql<{ code_hash: string; account_id: string }>('select * from membership.event_attendee where id = ?', [attendee.id]);
    expect(row.account_id).toBe(principal.accountId);
    expect(row.code_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(attendee.code);
    const [listed] = (await attendees(principal, { id: event.id }))!.data;
    expect(listed).toMatchObject({ id: attendee.id, code: null });
  });

  it('registers a member under its name and email; twice is 409 already_registered, after cancelling it may register again', async () => {
    const principal = principalFor();
    const member = await createMember(principal, 'Mia Member');
    const event = await createEvent(principal);
    const attendee = ok(await register(principal, { id: event.id, memberId: member.id })).registerForEvent;
    expect(attendee).toMatchObject({ memberId: member.id, member: { id: member.id, name: 'Mia Member' }, guest: false, name: member.name, email: member.email });
    expectError(await register(principal, { id: event.id, memberId: member.id }), 'CONFLICT', 'already_registered', 'memberId');
    // The member's address as a guest is the same person.
    expectError(await register(principal, { id: event.id, guestName: 'Mia', guestEmail: member.email.toUpperCase() }), 'CONFLICT', 'already_registered', 'guestEmail');
    ok(await cancelRegistration(principal, event.id, attendee.id));
    const again = ok(await register(principal, { id: event.id, memberId: member.id })).registerForEvent;
    expect(again.id).not.toBe(attendee.id);
  });

  it('refuses the same guest email twice with 409 already_registered', async () => {
    const principal = principalFor();
    const event = await createEvent(principal);
    ok(await register(principal, { id: event.id, guestName: 'G', guestEmail: 'g@example.org' }));
    expectError(await register(principal, { id: event.id, guestName: 'G2', guestEmail: 'G@EXAMPLE.org' }), 'CONFLICT', 'already_registered', 'guestEmail');
  });

  it('refuses a member of another account or mode, and an unknown one, as member_not_found', async () => {
    const principal = principalFor();
    const event = await createEvent(principal);
    const stranger = await createMember(principalFor(), 'Other Account');
    const sandboxed = await createMember({ ...principal, kind: 'test', mode: 'test' }, 'Sandbox');
    for (const memberId of [stranger.id, sandboxed.id, UNKNOWN_ID, 'nope']) {
      expectError(await register(principal, { id: event.id, memberId }), 'NOT_FOUND', 'member_not_found', 'memberId');
    }
  });

  it.each([
    [{}, 'memberId'],
    [{ memberId: UNKNOWN_ID, guestName: 'A', guestEmail: 'a@example.org' }, 'memberId'],
    [{ guestName: 'A' }, 'guestEmail'],
    [{ guestEmail: 'a@example.org' }, 'guestName'],
    [{ guestName: 'A', guestEmail: 'not-an-email' }, 'guestEmail'],
  ])('refuses %j as bad input naming %s', async (args, param) => {
    const principal = principalFor();
    const event = await createEvent(principal);
    expectError(await register(principal, { id: event.id, ...args }), 'BAD_USER_INPUT', 'invalid_parameter', param);
  });

  it('is 404 event_not_found for an unknown event or one of another account', async () => {
    const event = await createEvent(principalFor());
    for (const id of [UNKNOWN_ID, event.id, 'x']) {
      expectError(await register(principalFor(), { id, guestName: 'A', guestEmail: 'a@example.org' }), 'NOT_FOUND', 'event_not_found', 'id');
    }
  });

  it('is 409 outside the registration window and for a cancelled event', async () => {
    const principal = principalFor();
    const guest = { guestName: 'A', guestEmail: 'a@example.org' };
    const notYet = await createEvent(principal, { registrationOpensAt: inHours(24) });
    expectError(await register(principal, { id: notYet.id, ...guest }), 'CONFLICT', 'registration_closed', 'id');
    const started = await createEvent(principal, { startsAt: inHours(1), endsAt: inHours(2) });
    await sql(`update membership.event set starts_at = now() - interval '1 hour', registration_closes_at = now() - interval '1 hour' where id = ?`, [started.id]);
    expect(ok(await run<{ event: EventView }>(subgraph, principal, GET, { id: started.id })).event).toMatchObject({ status: 'SCHEDULED', registrationOpen: false });
    expectError(await register(principal, { id: started.id, ...guest }), 'CONFLICT', 'registration_closed', 'id');
    const cancelled = await createEvent(principal);
    ok(await run(subgraph, principal, CANCEL_EVENT, { id: cancelled.id }));
    expectError(await register(principal, { id: cancelled.id, ...guest }), 'CONFLICT', 'event_cancelled', 'id');
  });
});

describe('capacity and the waitlist', () => {
  it('takes 50 simultaneous registrations for 10 places as exactly 10 registered and 40 waitlisted in order', async () => {
    const principal = principalFor();
    const event = await createEvent(principal, { capacity: 10 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => register(principal, { id: event.id, guestName: `Rush ${i}`, guestEmail: `rush.${i}@example.org` })),
    );
    const made = results.map((r) => ok(r).registerForEvent);
    expect(made.filter((a) => a.status === 'REGISTERED')).toHaveLength(10);
    const waitlisted = made.filter((a) => a.status === 'WAITLISTED');
    expect(waitlisted).toHaveLength(40);
    // Each answer told its place in line, and the places are 1..40, each once.
    expect(waitlisted.map((a) => a.waitlistPosition).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // A later arrival is never ahead of an earlier one.
    const stored = await sql<{ id: string; status: string; waitlist_number: number | null; created_at: Date }>(
      `select id, status, waitlist_number, created_at from membership.event_attendee where event_id = ? order by waitlist_number`,
      [event.id],
    );
    const queue = stored.filter((r) => r.status === 'waitlisted');
    expect(new Set(queue.map((r) => r.waitlist_number)).size).toBe(40);
    const time = (r: { created_at: Date | string }) => new Date(r.created_at).getTime();
    const registeredTimes = stored.filter((r) => r.status === 'registered').map(time);
    expect(Math.max(...registeredTimes)).toBeLessThanOrEqual(Math.min(...queue.map(time)));
    const analytics = (await getEvent(principal, event.id))!.analytics;
    expect(analytics).toMatchObject({ registered: 10, waitlistLength: 40, capacityUsed: 1 });

    // Cancelling places, even all at once, moves the first in line up, in order.
    const byPosition = [...waitlisted].sort((a, b) => a.waitlistPosition! - b.waitlistPosition!);
    const leaving = made.filter((a) => a.status === 'REGISTERED').slice(0, 3);
    const cancelled = await Promise.all(leaving.map((a) => cancelRegistration(principal, event.id, a.id)));
    expect(cancelled.map((r) => ok(r).cancelRegistration.status)).toEqual(['CANCELLED', 'CANCELLED', 'CANCELLED']);
    const after = await allAttendees(principal, event.id);
    const promoted = after.filter((a) => a.promotedAt !== null).map((a) => a.id);
    expect(promoted.sort()).toEqual(byPosition.slice(0, 3).map((a) => a.id).sort());
    expect(after.filter((a) => a.status === 'REGISTERED')).toHaveLength(10);
    const stillWaiting = after.filter((a) => a.status === 'WAITLISTED').sort((a, b) => a.waitlistPosition! - b.waitlistPosition!);
    expect(stillWaiting.map((a) => a.id)).toEqual(byPosition.slice(3).map((a) => a.id));
    expect(stillWaiting.map((a) => a.waitlistPosition)).toEqual(Array.from({ length: 37 }, (_, i) => i + 1));

    // Leaving the waitlist frees no place and promotes nobody; the line closes up.
    const fourth = stillWaiting[0];
    ok(await cancelRegistration(principal, event.id, stillWaiting[1].id));
    const [next] = (await attendees(principal, { id: event.id, status: 'WAITLISTED', search: stillWaiting[2].email }))!.data;
    expect(next.waitlistPosition).toBe(2);
    expect((await attendees(principal, { id: event.id, status: 'WAITLISTED', search: fourth.email }))!.data[0].waitlistPosition).toBe(1);
    expect((await getEvent(principal, event.id))!.analytics).toMatchObject({ registered: 10, waitlistLength: 36, cancelled: 4 });
  });

  it('cancelling is safe to repeat; a checked-in attendee cannot cancel; unknown attendee is 404', async () => {
    const principal = principalFor();
    const event = await createEvent(principal, { capacity: 1 });
    const first = await registerGuest(principal, event.id);
    const second = await registerGuest(principal, event.id);
    expect(second.status).toBe('WAITLISTED');
    const cancelled = ok(await cancelRegistration(principal, event.id, first.id)).cancelRegistration;
    const again = ok(await cancelRegistration(principal, event.id, first.id)).cancelRegistration;
    expect(again.cancelledAt).toBe(cancelled.cancelledAt);
    const [promoted] = (await attendees(principal, { id: event.id, status: 'REGISTERED' }))!.data;
    expect(promoted).toMatchObject({ id: second.id, waitlistPosition: null });
    ok(await checkIn(principal, { id: event.id, attendeeId: second.id }));
    expectError(await cancelRegistration(principal, event.id, second.id), 'CONFLICT', 'attendee_checked_in', 'attendeeId');
    expectError(await cancelRegistration(principal, event.id, UNKNOWN_ID), 'NOT_FOUND', 'attendee_not_found', 'attendeeId');
    const other = await createEvent(principal);
    expectError(await cancelRegistration(principal, other.id, first.id), 'NOT_FOUND', 'attendee_not_found', 'attendeeId');
  });
});

describe('eventAttendees', () => {
  it('lists with status, guest and search filters and pages; null for an unknown event', async () => {
    const principal = principalFor();
    const member = await createMember(principal, 'Zed Member');
    const event = await createEvent(principal, { capacity: 2 });
    const a = ok(await register(principal, { id: event.id, memberId: member.id })).registerForEvent;
    const b = await registerGuest(principal, event.id, 'Bea Guest');
    const c = await registerGuest(principal, event.id, 'Cy Guest');
    ok(await checkIn(principal, { id: event.id, attendeeId: b.id }));
    const all = await attendees(principal, { id: event.id });
    expect(all!.data.map((x) => [x.id, x.status])).toEqual([
      [c.id, 'WAITLISTED'],
      [b.id, 'CHECKED_IN'],
      [a.id, 'REGISTERED'],
    ]);
    expect((await attendees(principal, { id: event.id, status: 'CHECKED_IN' }))!.data.map((x) => x.id)).toEqual([b.id]);
    expect((await attendees(principal, { id: event.id, guest: false }))!.data.map((x) => x.id)).toEqual([a.id]);
    expect((await attendees(principal, { id: event.id, guest: true }))!.data.map((x) => x.id)).toEqual([c.id, b.id]);
    expect((await attendees(principal, { id: event.id, search: 'cy g' }))!.data.map((x) => x.id)).toEqual([c.id]);
    expect((await attendees(principal, { id: event.id, search: '%' }))!.data).toEqual([]);
    const page1 = (await attendees(principal, { id: event.id, limit: 2 }))!;
    expect(page1.hasMore).toBe(true);
    const page2 = (await attendees(principal, { id: event.id, limit: 2, after: page1.nextCursor }))!;
    expect([...page1.data, ...page2.data].map((x) => x.id)).toEqual([c.id, b.id, a.id]);
    expect(await attendees(principal, { id: UNKNOWN_ID })).toBeNull();
    expect(await attendees(principalFor(), { id: event.id })).toBeNull();
    expectError(await run(subgraph, principal, ATTENDEES, { id: event.id, limit: 101 }), 'BAD_USER_INPUT', 'invalid_parameter', 'limit');
  });
});

describe('checkInAttendee', () => {
  it('checks in by id, and a retry reports the first time without error', async () => {
    const principal = principalFor();
    const event = await createEvent(principal);
    const attendee = await registerGuest(principal, event.id);
    const first = ok(await checkIn(principal, { id: event.id, attendeeId: attendee.id })).checkInAttendee;
    expect(first).toMatchObject({ alreadyCheckedIn: false, attendee: { id: attendee.id, status: 'CHECKED_IN' } });
    expect(first.attendee.checkedInAt).toBe(first.checkedInAt);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = ok(await checkIn(principal, { id: event.id, attendeeId: attendee.id })).checkInAttendee;
    expect(second).toMatchObject({ alreadyCheckedIn: true, checkedInAt: first.checkedInAt });
  });

  it('checks in by the code, whatever its case, spaces or dashes', async () => {
    const principal = principalFor();
    const event = await createEvent(principal);
    const attendee = await registerGuest(principal, event.id);
    const typed = `${attendee.code!.slice(0, 4).toLowerCase()}-${attendee.code!.slice(4)} `;
    const result = ok(await checkIn(principal, { id: event.id, code: typed })).checkInAttendee;
    expect(result).toMatchObject({ alreadyCheckedIn: false, attendee: { id: attendee.id } });
    const other = await createEvent(principal);
    expectError(await checkIn(principal, { id: other.id, code: attendee.code }), 'NOT_FOUND', 'attendee_not_found', 'code');
  });

  it('answers simultaneous check-ins of one attendee with exactly one first check-in', async () => {
    const principal = principalFor();
    const event = await createEvent(principal);
    const attendee = await registerGuest(principal, event.id);
    const results = (await Promise.all(Array.from({ length: 8 }, () => checkIn(principal, { id: event.id, attendeeId: attendee.id })))).map(
      (r) => ok(r).checkInAttendee,
    );
    expect(results.filter((r) => !r.alreadyCheckedIn)).toHaveLength(1);
    expect(new Set(results.map((r) => r.checkedInAt)).size).toBe(1);
  });

  it('is 404 for an unknown attendee, 409 for a waitlisted or cancelled one or a cancelled event, 400 without exactly one of id and code', async () => {
    const principal = principalFor();
    const event = await createEvent(principal, { capacity: 1 });
    const registered = await registerGuest(principal, event.id);
    const waitlisted = await registerGuest(principal, event.id);
    const leaver = await registerGuest(principal, event.id);
    ok(await cancelRegistration(principal, event.id, leaver.id));
    expectError(await checkIn(principal, { id: event.id, attendeeId: UNKNOWN_ID }), 'NOT_FOUND', 'attendee_not_found', 'attendeeId');
    expectError(await checkIn(principal, { id: event.id, attendeeId: 'x' }), 'NOT_FOUND', 'attendee_not_found', 'attendeeId');
    expectError(await checkIn(principal, { id: event.id, code: 'ZZZZZZZZ' }), 'NOT_FOUND', 'attendee_not_found', 'code');
    expectError(await checkIn(principal, { id: event.id, attendeeId: waitlisted.id }), 'CONFLICT', 'attendee_waitlisted', 'attendeeId');
    expectError(await checkIn(principal, { id: event.id, code: leaver.code }), 'CONFLICT', 'attendee_cancelled', 'code');
    expectError(await checkIn(principal, { id: event.id }), 'BAD_USER_INPUT', 'invalid_parameter', 'attendeeId');
    expectError(await checkIn(principal, { id: event.id, attendeeId: registered.id, code: registered.code }), 'BAD_USER_INPUT', 'invalid_parameter');
    expectError(await checkIn(principal, { id: UNKNOWN_ID, attendeeId: registered.id }), 'NOT_FOUND', 'event_not_found', 'id');
    expectError(await checkIn(principalFor(), { id: event.id, attendeeId: registered.id }), 'NOT_FOUND', 'event_not_found', 'id');
    ok(await run(subgraph, principal, CANCEL_EVENT, { id: event.id }));
    expectError(await checkIn(principal, { id: event.id, attendeeId: registered.id }), 'CONFLICT', 'event_cancelled');
  });
});

describe('analytics', () => {
  it('reports capacity used, check-in rate, and no-shows only once the event has ended', async () => {
    const principal = principalFor();
    const event = await createEvent(principal, { capacity: 4 });
    const people = [];
    for (let i = 0; i < 5; i++) people.push(await registerGuest(principal, event.id));
    ok(await checkIn(principal, { id: event.id, attendeeId: people[0].id }));
    ok(await cancelRegistration(principal, event.id, people[1].id)); // the fifth moves up
    const before = (await getEvent(principal, event.id))!.analytics;
    expect(before).toMatchObject({ registered: 4, checkedIn: 1, waitlistLength: 0, cancelled: 1, capacityUsed: 1, checkInRate: 0.25, noShows: null });
    await sql(`update membership.event set starts_at = now() - interval '3 hours', ends_at = now() - interval '1 hour', registration_closes_at = now() - interval '3 hours' where id = ?`, [event.id]);
    const after = (await getEvent(principal, event.id))!;
    expect(after.status).toBe('ENDED');
    expect(after.analytics).toMatchObject({ registered: 4, checkedIn: 1, noShows: 3 });
  });

  it('counts registrations per day in the event time zone, with the days between filled in', async () => {
    const principal = principalFor();
    const event = await createEvent(principal, { timeZone: 'Pacific/Auckland' });
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await registerGuest(principal, event.id));
    // 2030-03-01T11:30Z is already 2 March in Auckland (UTC+13); 3 March has none.
    const at = ['2030-03-01T11:30:00Z', '2030-03-01T12:30:00Z', '2030-03-04T01:00:00Z', '2030-03-01T10:00:00Z'];
    for (let i = 0; i < 4; i++) await sql('update membership.event_attendee set created_at = ? where id = ?', [at[i], made[i].id]);
    ok(await cancelRegistration(principal, event.id, made[3].id));
    expect((await getEvent(principal, event.id))!.analytics.registrationsOverTime).toEqual([
      { date: '2030-03-01', registrations: 1, cumulative: 1 },
      { date: '2030-03-02', registrations: 2, cumulative: 3 },
      { date: '2030-03-03', registrations: 0, cumulative: 3 },
      { date: '2030-03-04', registrations: 1, cumulative: 4 },
    ]);
  });
});
