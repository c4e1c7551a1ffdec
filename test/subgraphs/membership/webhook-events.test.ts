import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import { MembershipClockWorker } from '../../../subgraphs/membership/clock/membership-clock.worker.js';
import { WEBHOOK_RELAY_KEY_ID } from '../../../subgraphs/membership/webhook/webhook-relay.resolver.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor, run } from '../../support/subgraph-harness.js';

let testbed: MembershipTestbed;
let subgraph: Subgraph;

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph({ webhooks: { allowPrivateTargets: true, timeoutMs: 1000 } }));
});
afterAll(async () => {
  await testbed?.close();
});

async function ok<T = Record<string, any>>(principal: Principal, source: string, variables?: Record<string, unknown>): Promise<T> {
  const result = await run<T>(subgraph, principal, source, variables);
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data!;
}

const MEMBERSHIP_EVENTS = ['member.created', 'member.renewed', 'member.lapsed', 'member.renewal_due', 'invoice.paid', 'invoice.refunded', 'registration.confirmed', 'registration.waitlisted', 'registration.promoted'];

async function endpoint(principal: Principal, eventTypes: string[] = MEMBERSHIP_EVENTS): Promise<string> {
  const created = await ok(principal, `mutation($url: String!, $eventTypes: [String!]!) { createChatWebhook(url: $url, eventTypes: $eventTypes) { webhook { id } } }`, {
    url: 'http://127.0.0.1:9/hook',
    eventTypes,
  });
  return created.createChatWebhook.webhook.id;
}

interface Event {
  type: string;
  timestamp: string;
  data: Record<string, any>;
}

/** What was queued for one endpoint, oldest first: the bodies the worker will send. */
async function events(webhookId: string): Promise<Event[]> {
  const rows = await subgraph.orm.em.getConnection().execute<{ payload: string }[]>('select payload from membership.chat_webhook_delivery where webhook_id = ? order by created_at, id', [webhookId]);
  return rows.map((row) => JSON.parse(row.payload) as Event);
}

const now = new Date();
const day = (days: number, years = 0) => new Date(Date.UTC(now.getUTCFullYear() + years, now.getUTCMonth(), now.getUTCDate() + days)).toISOString().slice(0, 10);
let emails = 0;
const email = () => `events.${++emails}@example.org`;

describe('webhook events beyond chat', () => {
  it('tell an endpoint of members, invoices and registrations of its own account and mode, with documented payloads', async () => {
    const owner = principalFor();
    const stranger = principalFor();
    const sandbox = { ...owner, mode: 'test' as const, keyId: `${owner.keyId}-test` };
    const mine = await endpoint(owner);
    const theirs = await endpoint(stranger);
    const sandboxed = await endpoint(sandbox);
    const onlyPaid = await endpoint(owner, ['invoice.paid']);

    const category = (await ok(owner, `mutation { createMemberCategory(name: "Regular", feeAmount: 5000, currency: "EUR", period: YEARLY, graceDays: 10) { id } }`)).createMemberCategory.id;
    const member = (await ok(owner, `mutation($email: String!, $categoryId: ID, $joinedOn: LocalDate) { createMember(name: "Ada", email: $email, categoryId: $categoryId, joinedOn: $joinedOn) { id periodEnd } }`, { email: email(), categoryId: category, joinedOn: day(6, -1) })).createMember;
    const [first] = (await ok(owner, `query($id: ID) { invoices(memberId: $id) { data { id } } }`, { id: member.id })).invoices.data;
    await ok(owner, `mutation($id: ID!) { createPayment(invoiceId: $id, amount: 5000, method: CARD) { id } }`, { id: first.id });
    await ok(owner, `mutation($id: ID!) { renewMember(id: $id) { id } }`, { id: member.id });
    const renewal = (await ok(owner, `query($id: ID) { invoices(memberId: $id, status: OPEN) { data { id } } }`, { id: member.id })).invoices.data[0];
    const payment = (await ok(owner, `mutation($id: ID!) { createPayment(invoiceId: $id, amount: 5000, method: CARD) { id } }`, { id: renewal.id })).createPayment.id;
    await ok(owner, `mutation($id: ID!) { createRefund(paymentId: $id, amount: 1000, reason: "Goodwill") { id } }`, { id: payment });

    const startsAt = new Date(Date.now() + 7 * 86_400_000);
    const free = (await ok(owner, `mutation($s: DateTime!, $e: DateTime!) { createEvent(title: "Talk", startsAt: $s, endsAt: $e, timeZone: "UTC", capacity: 1) { id } }`, { s: startsAt, e: new Date(startsAt.getTime() + 3_600_000) })).createEvent.id;
    const seated = (await ok(owner, `mutation($id: ID!, $e: String!) { registerForEvent(id: $id, guestName: "G", guestEmail: $e) { id } }`, { id: free, e: email() })).registerForEvent.id;
    const waiting = (await ok(owner, `mutation($id: ID!, $e: String!) { registerForEvent(id: $id, guestName: "W", guestEmail: $e) { id } }`, { id: free, e: email() })).registerForEvent.id;
    await ok(owner, `mutation($id: ID!, $a: ID!) { cancelRegistration(id: $id, attendeeId: $a) { id } }`, { id: free, a: seated });

    const lapsed = (await ok(owner, `mutation($email: String!, $joinedOn: LocalDate) { createMember(name: "Gone", email: $email, joinedOn: $joinedOn) { id } }`, { email: email(), joinedOn: day(-4, -1) })).createMember;
    await new MembershipClockWorker(subgraph.orm, { settings: { renewalReminderDays: 30 } }).runOnce();

    // Something in the other account and in test mode, which the owner's endpoint must not see.
    await ok(stranger, `mutation($email: String!) { createMember(name: "Theirs", email: $email) { id } }`, { email: email() });
    await ok(sandbox, `mutation($email: String!) { createMember(name: "Sandbox", email: $email) { id } }`, { email: email() });

    const told = await events(mine);
    expect(told.map((e) => e.type).sort()).toEqual(
      [
        'member.created', // Ada
        'invoice.paid', // her first invoice
        'member.renewed', // the renewal paid
        'invoice.paid',
        'invoice.refunded',
        'registration.confirmed',
        'registration.waitlisted',
        'registration.promoted',
        'member.created', // Gone
        'member.lapsed',
        'member.renewal_due', // Ada's period ended within 30 days until the renewal was paid; the refund took it back
      ].sort(),
    );
    expect(told.every((e) => e.data.livemode === true && !Number.isNaN(Date.parse(e.timestamp)))).toBe(true);
    const byType = (type: string) => told.filter((e) => e.type === type);
    expect(byType('member.created')[0].data.member).toEqual({ id: member.id, name: 'Ada', email: expect.any(String), categoryId: category, status: 'PENDING', periodStart: day(6, -1), periodEnd: member.periodEnd, graceEndsOn: expect.any(String) });
    expect(byType('member.renewed')[0].data).toMatchObject({ member: { id: member.id, status: 'ACTIVE', periodEnd: day(5, 1) }, invoiceId: renewal.id });
    expect(byType('invoice.paid').map((e) => e.data.invoice.kind)).toEqual(['MEMBERSHIP', 'RENEWAL']);
    expect(byType('invoice.paid')[1].data.invoice).toMatchObject({ id: renewal.id, status: 'PAID', total: 5000, amountPaid: 5000, amountRemaining: 0, currency: 'EUR' });
    expect(byType('invoice.refunded')[0].data).toMatchObject({ invoice: { id: renewal.id, status: 'OPEN', amountRefunded: 1000 }, refund: { paymentId: payment, amount: 1000, currency: 'EUR', reason: 'Goodwill' } });
    expect(byType('registration.promoted')[0].data.registration).toMatchObject({ id: waiting, eventId: free, status: 'REGISTERED', guest: true });
    expect(byType('registration.waitlisted')[0].data.registration).toMatchObject({ id: waiting, status: 'WAITLISTED' });
    expect(byType('member.lapsed')[0].data.member).toMatchObject({ id: lapsed.id, status: 'LAPSED' });

    expect((await events(onlyPaid)).map((e) => e.type)).toEqual(['invoice.paid', 'invoice.paid']);
    expect((await events(theirs)).map((e) => [e.type, e.data.member.name])).toEqual([['member.created', 'Theirs']]);
    expect((await events(sandboxed)).map((e) => [e.type, e.data.member.name, e.data.livemode])).toEqual([['member.created', 'Sandbox', false]]);
    // A lapse is told once: the next sweep finds nothing new.
    expect((await new MembershipClockWorker(subgraph.orm).runOnce()).lapseNotices).toBe(0);
  });

  it('take the new event types at registration, and refuse an unknown one', async () => {
    const owner = principalFor();
    const created = await run(subgraph, owner, `mutation { createChatWebhook(url: "http://127.0.0.1:9/x", eventTypes: ["tender.awarded", "application.status_changed"]) { webhook { eventTypes } } }`);
    expect(created.errors).toBeUndefined();
    const refused = await run(subgraph, owner, `mutation { createChatWebhook(url: "http://127.0.0.1:9/x", eventTypes: ["tender.opened"]) { webhook { id } } }`);
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'unknown_event_type' });
  });
});

describe('events the marketplace relays', () => {
  const RELAY = `mutation($eventId: String!, $type: String!, $timestamp: String!, $data: JSONObject!) { relayWebhookEvent(eventId: $eventId, type: $type, timestamp: $timestamp, data: $data) }`;

  it('enter the account’s outbox once under the id they were raised with, from the relay only', async () => {
    const owner = principalFor();
    const hook = await endpoint(owner, ['tender.awarded']);
    const relay = { ...owner, keyId: WEBHOOK_RELAY_KEY_ID };
    const event = { eventId: 'mkt_0123456789abcdef', type: 'tender.awarded', timestamp: '2026-11-28T10:00:00.000Z', data: { tender: { id: 't1' } } };
    const refused = await run(subgraph, owner, RELAY, event);
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
    expect(await ok(relay, RELAY, event)).toEqual({ relayWebhookEvent: true });
    expect(await ok(relay, RELAY, event)).toEqual({ relayWebhookEvent: true });
    expect(await events(hook)).toEqual([{ type: 'tender.awarded', timestamp: event.timestamp, data: { tender: { id: 't1' }, livemode: true } }]);
    const rows = await subgraph.orm.em.getConnection().execute('select event_id from membership.chat_webhook_delivery where webhook_id = ?', [hook]);
    expect(rows).toEqual([{ event_id: event.eventId }]);
    const wrongType = await run(subgraph, relay, RELAY, { ...event, eventId: 'mkt_x', type: 'member.created' });
    expect(wrongType.errors?.[0].extensions).toMatchObject({ reason: 'unknown_event_type' });
  });
});
