import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import { principalFor } from '../../support/subgraph-harness.js';
import { startMembership, uniqueEmail, type Membership } from './finance-support.js';

let m: Membership;
beforeAll(async () => {
  m = await startMembership();
});
afterAll(async () => {
  await m?.close();
});

const HOUR = 3_600_000;
const inHours = (h: number) => new Date(Date.now() + h * HOUR).toISOString();
const EVENT = 'id title description location startsAt endsAt timeZone capacity registrationOpensAt registrationClosesAt price currency paymentTermHours status';
const CREATE = `mutation($startsAt: DateTime!, $endsAt: DateTime!, $capacity: Int, $price: Int, $currency: String, $registrationClosesAt: DateTime) {
  createEvent(title: "Meetup", startsAt: $startsAt, endsAt: $endsAt, timeZone: "UTC", capacity: $capacity, price: $price, currency: $currency, registrationClosesAt: $registrationClosesAt) { ${EVENT} }
}`;
const UPDATE = `mutation($id: ID!, $title: String, $description: String, $location: String, $startsAt: DateTime, $endsAt: DateTime, $timeZone: String, $capacity: Int,
  $registrationOpensAt: DateTime, $registrationClosesAt: DateTime, $price: Int, $currency: String, $paymentTermHours: Int) {
  updateEvent(id: $id, title: $title, description: $description, location: $location, startsAt: $startsAt, endsAt: $endsAt, timeZone: $timeZone, capacity: $capacity,
    registrationOpensAt: $registrationOpensAt, registrationClosesAt: $registrationClosesAt, price: $price, currency: $currency, paymentTermHours: $paymentTermHours) { ${EVENT} }
}`;
const REGISTER = `mutation($id: ID!, $guestName: String, $guestEmail: String, $memberId: ID) {
  registerForEvent(id: $id, guestName: $guestName, guestEmail: $guestEmail, memberId: $memberId) { id status invoiceId }
}`;
const ATTENDEES = `query($id: ID!) { eventAttendees(id: $id, limit: 100) { data { id status invoiceId waitlistPosition promotedAt } } }`;

interface AttendeeView {
  id: string;
  status: string;
  invoiceId: string | null;
}

async function create(principal: Principal, args: Record<string, unknown> = {}) {
  return (await m.ok(principal, CREATE, { startsAt: inHours(48), endsAt: inHours(50), ...args })).createEvent;
}

let guests = 0;
async function guest(principal: Principal, eventId: string): Promise<AttendeeView> {
  return (await m.ok(principal, REGISTER, { id: eventId, guestName: 'Guest', guestEmail: `guest.${++guests}@example.org` })).registerForEvent;
}

async function attendees(principal: Principal, eventId: string): Promise<AttendeeView[]> {
  return (await m.ok(principal, ATTENDEES, { id: eventId })).eventAttendees.data;
}

describe('creating an event', () => {
  it('refuses an event that has started already with 400 invalid_parameter startsAt', async () => {
    const principal = principalFor();
    expect(await m.fails(principal, CREATE, { startsAt: inHours(-1), endsAt: inHours(2) })).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_parameter', param: 'startsAt' });
    expect(await m.fails(principal, CREATE, { startsAt: inHours(-48), endsAt: inHours(-46) })).toMatchObject({ param: 'startsAt' });
    expect(await m.sql('select count(*)::int as n from membership.event where account_id = ?', [principal.accountId])).toEqual([{ n: 0 }]);
  });
});

describe('updating an event', () => {
  it('changes title, description, location, times and the payment term; a closing time left at its default follows the start', async () => {
    const principal = principalFor();
    const event = await create(principal);
    const startsAt = inHours(72);
    const updated = (await m.ok(principal, UPDATE, { id: event.id, title: 'Annual meeting', description: 'Agenda', location: 'Hall', startsAt, endsAt: inHours(75), timeZone: 'europe/berlin', paymentTermHours: 12 })).updateEvent;
    expect(updated).toMatchObject({ title: 'Annual meeting', description: 'Agenda', location: 'Hall', timeZone: 'Europe/Berlin', paymentTermHours: 12, capacity: null });
    expect(new Date(updated.registrationClosesAt).getTime()).toBe(new Date(startsAt).getTime());
    const cleared = (await m.ok(principal, UPDATE, { id: event.id, description: null, location: null })).updateEvent;
    expect(cleared).toMatchObject({ title: 'Annual meeting', description: null, location: null });
  });

  it.each([
    ['a start in the past', { startsAt: inHours(-1) }, 'startsAt'],
    ['an end before the start', { endsAt: inHours(47) }, 'endsAt'],
    ['registration closing after the end', { registrationClosesAt: inHours(51) }, 'registrationClosesAt'],
    ['an unknown time zone', { timeZone: 'Mars/Olympus' }, 'timeZone'],
    ['a price without a currency', { price: 1000 }, 'currency'],
  ])('refuses %s with 400 naming it, changing nothing', async (_label, change, param) => {
    const principal = principalFor();
    const event = await create(principal);
    expect(await m.fails(principal, UPDATE, { id: event.id, title: 'Changed', ...change })).toMatchObject({ code: 'BAD_USER_INPUT', param });
    expect((await m.ok(principal, `query($id: ID!) { event(id: $id) { ${EVENT} } }`, { id: event.id })).event).toEqual(event);
  });

  it('sets the price before the first registration, and refuses it after with 409 event_has_registrations', async () => {
    const principal = principalFor();
    const event = await create(principal);
    expect((await m.ok(principal, UPDATE, { id: event.id, price: 1500, currency: 'eur' })).updateEvent).toMatchObject({ price: 1500, currency: 'EUR' });
    const memberId = (await m.ok(principal, `mutation($email: String!) { createMember(name: "A", email: $email) { id } }`, { email: uniqueEmail('price') })).createMember.id;
    await m.ok(principal, REGISTER, { id: event.id, memberId });
    expect(await m.fails(principal, UPDATE, { id: event.id, price: 0 })).toMatchObject({ code: 'CONFLICT', reason: 'event_has_registrations', param: 'price' });
    expect(await m.fails(principal, UPDATE, { id: event.id, currency: 'USD' })).toMatchObject({ reason: 'event_has_registrations', param: 'currency' });
    expect((await m.ok(principal, UPDATE, { id: event.id, price: 1500, title: 'Same price' })).updateEvent.title).toBe('Same price');
  });

  it('refuses a cancelled or ended event with 409', async () => {
    const principal = principalFor();
    const cancelled = await create(principal);
    await m.ok(principal, `mutation($id: ID!) { cancelEvent(id: $id) { id } }`, { id: cancelled.id });
    expect(await m.fails(principal, UPDATE, { id: cancelled.id, title: 'x' })).toMatchObject({ reason: 'event_cancelled' });
    const ended = await create(principal);
    await m.sql(`update membership.event set starts_at = now() - interval '3 hours', ends_at = now() - interval '1 hour', registration_closes_at = now() - interval '3 hours' where id = ?`, [ended.id]);
    expect(await m.fails(principal, UPDATE, { id: ended.id, title: 'x' })).toMatchObject({ reason: 'event_ended' });
    expect(await m.fails(principalFor(), UPDATE, { id: cancelled.id, title: 'x' })).toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('changing the capacity', () => {
  it('promotes the waitlist in order when it grows, and when it becomes unlimited', async () => {
    const principal = principalFor();
    const event = await create(principal, { capacity: 2 });
    const all: AttendeeView[] = [];
    for (let i = 0; i < 6; i++) all.push(await guest(principal, event.id));
    expect(all.map((a) => a.status)).toEqual(['REGISTERED', 'REGISTERED', 'WAITLISTED', 'WAITLISTED', 'WAITLISTED', 'WAITLISTED']);
    await m.ok(principal, UPDATE, { id: event.id, capacity: 4 });
    const byId = new Map((await attendees(principal, event.id)).map((a) => [a.id, a.status]));
    expect(all.map((a) => byId.get(a.id))).toEqual(['REGISTERED', 'REGISTERED', 'REGISTERED', 'REGISTERED', 'WAITLISTED', 'WAITLISTED']);
    await m.ok(principal, UPDATE, { id: event.id, capacity: null });
    expect((await attendees(principal, event.id)).every((a) => a.status === 'REGISTERED')).toBe(true);
  });

  it('never unseats anyone: below the places taken is 409 capacity_below_taken, down to them is fine', async () => {
    const principal = principalFor();
    const event = await create(principal, { capacity: 5 });
    for (let i = 0; i < 3; i++) await guest(principal, event.id);
    expect(await m.fails(principal, UPDATE, { id: event.id, capacity: 2 })).toMatchObject({ code: 'CONFLICT', reason: 'capacity_below_taken', param: 'capacity' });
    expect((await m.ok(principal, UPDATE, { id: event.id, capacity: 3 })).updateEvent.capacity).toBe(3);
    expect((await guest(principal, event.id)).status).toBe('WAITLISTED');
    expect((await attendees(principal, event.id)).filter((a) => a.status === 'REGISTERED')).toHaveLength(3);
  });

  it('promotes members of a paid event PENDING with invoices of their own', async () => {
    const principal = principalFor();
    const event = await create(principal, { capacity: 1, price: 900, currency: 'EUR' });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await m.ok(principal, `mutation($email: String!) { createMember(name: "P", email: $email) { id } }`, { email: uniqueEmail('paid') })).createMember.id);
    const made = [];
    for (const memberId of ids) made.push((await m.ok(principal, REGISTER, { id: event.id, memberId })).registerForEvent as AttendeeView);
    await m.ok(principal, UPDATE, { id: event.id, capacity: 2 });
    const after = new Map((await attendees(principal, event.id)).map((a) => [a.id, a]));
    expect(made.map((a) => after.get(a.id)!.status)).toEqual(['PENDING', 'PENDING', 'WAITLISTED']);
    expect(after.get(made[1].id)!.invoiceId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('holds while registrations arrive: never more places taken than the capacity of the moment, the waitlist promoted in arrival order', async () => {
    const principal = principalFor();
    const event = await create(principal, { capacity: 5 });
    const changes = [8, 3, 12, 10];
    const results = await Promise.all([
      ...Array.from({ length: 30 }, () => m.gql(principal, REGISTER, { id: event.id, guestName: 'Rush', guestEmail: `rush.${++guests}@example.org` })),
      ...changes.map((capacity) => m.gql(principal, UPDATE, { id: event.id, capacity })),
    ]);
    for (const result of results.slice(30)) {
      if (result.errors) expect(result.errors[0].extensions).toMatchObject({ reason: 'capacity_below_taken' });
    }
    expect(results.slice(0, 30).every((r) => !r.errors)).toBe(true);
    const capacity = (await m.ok(principal, `query($id: ID!) { event(id: $id) { capacity } }`, { id: event.id })).event.capacity as number;
    const rows = await m.sql<{ status: string; waitlist_number: number | null; created_at: Date }>(
      'select status, waitlist_number, created_at from membership.event_attendee where event_id = ? order by created_at, id',
      [event.id],
    );
    const holding = rows.filter((r) => r.status === 'registered');
    const waiting = rows.filter((r) => r.status === 'waitlisted');
    expect(holding.length).toBe(Math.min(capacity, 30));
    expect(holding.length + waiting.length).toBe(30);
    // Nobody waiting arrived before somebody who got a place from the waitlist.
    const promoted = holding.filter((r) => r.waitlist_number !== null).map((r) => r.waitlist_number!);
    const stillWaiting = waiting.map((r) => r.waitlist_number!);
    if (promoted.length && stillWaiting.length) expect(Math.max(...promoted)).toBeLessThan(Math.min(...stillWaiting));
  });
});
