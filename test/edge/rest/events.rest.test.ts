import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform();
});

afterAll(async () => {
  await platform?.close();
});

const UNKNOWN_ID = '00000000-0000-4000-8000-ffffffffffff';
const HOUR = 3_600_000;

let accountCounter = 0;
function freshKey(kind: 'live' | 'test' = 'live'): Promise<string> {
  return platform.issueKey(`events-rest-${++accountCounter}`, kind);
}

function inHours(hours: number): string {
  return new Date(Date.now() + hours * HOUR).toISOString();
}

async function body<T = Record<string, unknown>>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return JSON.parse(text) as T;
}

/** Asserts the membership error body: its status, code and param, and the request id. */
async function expectError(response: Response, status: number, code: string, param: string | null = null) {
  const parsed = await body<{ error: Record<string, unknown> }>(response, status);
  expect(Object.keys(parsed.error).sort()).toEqual(['code', 'message', 'param', 'request_id', 'type']);
  expect(parsed.error).toMatchObject({ code, param });
  expect(parsed.error.request_id).toBe(response.headers.get('x-request-id'));
}

interface EventBody {
  id: string;
  title: string;
  startsAt: string;
  endsAt: string;
  startsAtLocal: string;
  timeZone: string;
  capacity: number | null;
  status: string;
  analytics: {
    registered: number;
    checkedIn: number;
    waitlistLength: number;
    capacityUsed: number | null;
    checkInRate: number | null;
    noShows: number | null;
    registrationsOverTime: { date: string; registrations: number; cumulative: number }[];
  };
}

interface AttendeeBody {
  id: string;
  eventId: string;
  name: string;
  email: string;
  status: string;
  waitlistPosition: number | null;
  code: string | null;
  checkedInAt: string | null;
  member: { id: string; name: string } | null;
}

async function createEvent(key: string, json: Record<string, unknown> = {}): Promise<EventBody> {
  const response = await platform.request('/api/v1/events', {
    method: 'POST',
    key,
    json: { title: 'Spring meetup', startsAt: inHours(48), endsAt: inHours(50), timeZone: 'America/New_York', ...json },
  });
  return body<EventBody>(response, 201);
}

function register(key: string, eventId: string, json: Record<string, unknown>): Promise<Response> {
  return platform.request(`/api/v1/events/${eventId}/register`, { method: 'POST', key, json });
}

function checkIn(key: string, eventId: string, json: Record<string, unknown>): Promise<Response> {
  return platform.request(`/api/v1/events/${eventId}/check-in`, { method: 'POST', key, json });
}

describe('the event routes', () => {
  it('POST /events answers 201 with the event and its analytics; GET /events/{id} and GET /events show the same', async () => {
    const key = await freshKey();
    const event = await createEvent(key, { startsAt: '2031-04-10T18:00:00-04:00', endsAt: '2031-04-10T21:00:00-04:00', capacity: 2, location: 'Library' });
    expect(event).toMatchObject({
      title: 'Spring meetup',
      startsAt: '2031-04-10T22:00:00.000Z',
      startsAtLocal: '2031-04-10T18:00:00-04:00',
      timeZone: 'America/New_York',
      capacity: 2,
      status: 'SCHEDULED',
      livemode: true,
      analytics: { registered: 0, waitlistLength: 0, capacityUsed: 0, checkInRate: null, noShows: null, registrationsOverTime: [] },
    });
    expect(await body(await platform.request(`/api/v1/events/${event.id}`, { key }), 200)).toEqual(event);
    const page = await body<{ data: EventBody[]; hasMore: boolean; nextCursor: string | null }>(await platform.request('/api/v1/events', { key }), 200);
    expect(page).toEqual({ data: [event], hasMore: false, nextCursor: null });
  });

  it('GET /events/{id} of an unknown or another account\'s event is 404 event_not_found', async () => {
    const event = await createEvent(await freshKey());
    const key = await freshKey();
    await expectError(await platform.request(`/api/v1/events/${UNKNOWN_ID}`, { key }), 404, 'event_not_found', 'id');
    await expectError(await platform.request(`/api/v1/events/${event.id}`, { key }), 404, 'event_not_found', 'id');
  });

  it('POST /events refuses a bad time zone or an end before the start with 400 naming the parameter', async () => {
    const key = await freshKey();
    const post = (json: Record<string, unknown>) =>
      platform.request('/api/v1/events', { method: 'POST', key, json: { title: 'X', startsAt: inHours(5), endsAt: inHours(6), timeZone: 'UTC', ...json } });
    await expectError(await post({ timeZone: 'Nowhere/Town' }), 400, 'invalid_parameter', 'timeZone');
    await expectError(await post({ endsAt: inHours(4) }), 400, 'invalid_parameter', 'endsAt');
    await expectError(await post({ capacity: 0 }), 400, 'invalid_parameter', 'capacity');
  });

  it('POST /events/{id}/register answers 201 registered, then 201 waitlisted past capacity; a duplicate is 409', async () => {
    const key = await freshKey();
    const event = await createEvent(key, { capacity: 1 });
    const first = await body<AttendeeBody>(await register(key, event.id, { guestName: 'Ann', guestEmail: 'ann@example.org' }), 201);
    expect(first).toMatchObject({ eventId: event.id, name: 'Ann', status: 'REGISTERED', waitlistPosition: null, member: null });
    expect(first.code).toMatch(/^[A-Z2-9]{8}$/);
    const second = await body<AttendeeBody>(await register(key, event.id, { guestName: 'Bob', guestEmail: 'bob@example.org' }), 201);
    expect(second).toMatchObject({ status: 'WAITLISTED', waitlistPosition: 1 });
    await expectError(await register(key, event.id, { guestName: 'Ann again', guestEmail: 'ANN@example.org' }), 409, 'already_registered', 'guestEmail');
    await expectError(await register(key, UNKNOWN_ID, { guestName: 'A', guestEmail: 'a@example.org' }), 404, 'event_not_found', 'id');
    await expectError(await register(key, event.id, {}), 400, 'invalid_parameter', 'memberId');
    await expectError(await register(key, event.id, { memberId: UNKNOWN_ID }), 404, 'member_not_found', 'memberId');
  });

  it('POST /events/{id}/register by memberId registers the member under its name; twice is 409 already_registered', async () => {
    const key = await freshKey();
    const member = await body<{ id: string; name: string; email: string }>(
      await platform.request('/api/v1/members', { method: 'POST', key, json: { name: 'Mo Member', email: 'mo@example.org' } }),
      201,
    );
    const event = await createEvent(key);
    const attendee = await body<AttendeeBody>(await register(key, event.id, { memberId: member.id }), 201);
    expect(attendee).toMatchObject({ name: 'Mo Member', email: 'mo@example.org', status: 'REGISTERED', member: { id: member.id, name: 'Mo Member' } });
    await expectError(await register(key, event.id, { memberId: member.id }), 409, 'already_registered', 'memberId');
    await expectError(await register(key, event.id, { memberId: member.id, guestName: 'X', guestEmail: 'x@example.org' }), 400, 'invalid_parameter', 'memberId');
  });

  it('POST /events/{id}/register is 409 registration_closed once the event has started', async () => {
    const key = await freshKey();
    const event = await createEvent(key, { startsAt: inHours(1), endsAt: inHours(2) });
    // An event is created before it starts: time passing is played by moving its start back.
    const client = new pg.Client({ connectionString: platform.databaseUrl });
    await client.connect();
    try {
      await client.query(`update membership.event set starts_at = now() - interval '1 hour', registration_closes_at = now() - interval '1 hour' where id = $1`, [event.id]);
    } finally {
      await client.end();
    }
    await expectError(await register(key, event.id, { guestName: 'Late', guestEmail: 'late@example.org' }), 409, 'registration_closed', 'id');
  });

  it('holds capacity under 30 simultaneous REST registrations for 5 places', async () => {
    const key = await freshKey();
    const event = await createEvent(key, { capacity: 5 });
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => register(key, event.id, { guestName: `R${i}`, guestEmail: `r${i}@example.org` })),
    );
    const made = await Promise.all(responses.map((r) => body<AttendeeBody>(r, 201)));
    expect(made.filter((a) => a.status === 'REGISTERED')).toHaveLength(5);
    expect(made.filter((a) => a.status === 'WAITLISTED').map((a) => a.waitlistPosition).sort((a, b) => a! - b!)).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    const shown = await body<EventBody>(await platform.request(`/api/v1/events/${event.id}`, { key }), 200);
    expect(shown.analytics).toMatchObject({ registered: 5, waitlistLength: 25, capacityUsed: 1 });
  });

  it('GET /events/{id}/attendees lists with status filter and paging; 404 for an unknown event', async () => {
    const key = await freshKey();
    const event = await createEvent(key, { capacity: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await body<AttendeeBody>(await register(key, event.id, { guestName: `A${i}`, guestEmail: `a${i}@example.org` }), 201)).id);
    type Page = { data: AttendeeBody[]; hasMore: boolean; nextCursor: string | null };
    const all = await body<Page>(await platform.request(`/api/v1/events/${event.id}/attendees`, { key }), 200);
    expect(all.data.map((a) => a.id)).toEqual([...ids].reverse());
    expect(all.data.every((a) => a.code === null)).toBe(true);
    const waiting = await body<Page>(await platform.request(`/api/v1/events/${event.id}/attendees?status=WAITLISTED`, { key }), 200);
    expect(waiting.data.map((a) => [a.id, a.waitlistPosition])).toEqual([[ids[2], 1]]);
    const first = await body<Page>(await platform.request(`/api/v1/events/${event.id}/attendees?limit=2`, { key }), 200);
    expect(first.hasMore).toBe(true);
    const rest = await body<Page>(
      await platform.request(`/api/v1/events/${event.id}/attendees?limit=2&after=${encodeURIComponent(first.nextCursor!)}`, { key }),
      200,
    );
    expect([...first.data, ...rest.data].map((a) => a.id)).toEqual([...ids].reverse());
    await expectError(await platform.request(`/api/v1/events/${UNKNOWN_ID}/attendees`, { key }), 404, 'event_not_found', 'id');
    await expectError(await platform.request(`/api/v1/events/${event.id}/attendees?limit=abc`, { key }), 400, 'invalid_parameter', 'limit');
  });

  it('POST /events/{id}/check-in: 200, a retry is 200 alreadyCheckedIn with the first time; unknown 404; waitlisted 409', async () => {
    const key = await freshKey();
    const event = await createEvent(key, { capacity: 1 });
    const ann = await body<AttendeeBody>(await register(key, event.id, { guestName: 'Ann', guestEmail: 'ann@example.org' }), 201);
    const bob = await body<AttendeeBody>(await register(key, event.id, { guestName: 'Bob', guestEmail: 'bob@example.org' }), 201);
    const first = await body<{ alreadyCheckedIn: boolean; checkedInAt: string; attendee: AttendeeBody }>(await checkIn(key, event.id, { code: ann.code }), 200);
    expect(first).toMatchObject({ alreadyCheckedIn: false, attendee: { id: ann.id, name: 'Ann', status: 'CHECKED_IN' } });
    const again = await body(await checkIn(key, event.id, { attendeeId: ann.id }), 200);
    expect(again).toMatchObject({ alreadyCheckedIn: true, checkedInAt: first.checkedInAt });
    await expectError(await checkIn(key, event.id, { attendeeId: UNKNOWN_ID }), 404, 'attendee_not_found', 'attendeeId');
    await expectError(await checkIn(key, event.id, { code: 'NOPE2345' }), 404, 'attendee_not_found', 'code');
    await expectError(await checkIn(key, event.id, { attendeeId: bob.id }), 409, 'attendee_waitlisted', 'attendeeId');
    await expectError(await checkIn(key, UNKNOWN_ID, { attendeeId: ann.id }), 404, 'event_not_found', 'id');
    const shown = await body<EventBody>(await platform.request(`/api/v1/events/${event.id}`, { key }), 200);
    expect(shown.analytics).toMatchObject({ registered: 1, checkedIn: 1, checkInRate: 1, waitlistLength: 1 });
  });

  it("an account's test key sees only its test-mode events, and the live key only live ones", async () => {
    const account = `events-rest-${++accountCounter}`;
    const live = await platform.issueKey(account, 'live');
    const test = await platform.issueKey(account, 'test');
    const liveEvent = await createEvent(live);
    const testEvent = await createEvent(test);
    expect(testEvent).toMatchObject({ livemode: false });
    const page = async (key: string) => (await body<{ data: EventBody[] }>(await platform.request('/api/v1/events', { key }), 200)).data.map((e) => e.id);
    expect(await page(test)).toEqual([testEvent.id]);
    expect(await page(live)).toEqual([liveEvent.id]);
    await expectError(await platform.request(`/api/v1/events/${liveEvent.id}`, { key: test }), 404, 'event_not_found', 'id');
  });

  it('answers 405 for a wrong method on an event path', async () => {
    const key = await freshKey();
    const event = await createEvent(key);
    const response = await platform.request(`/api/v1/events/${event.id}/check-in`, { key });
    expect(response.status).toBe(405);
  });
});
