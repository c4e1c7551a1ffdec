import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MembershipClockWorker } from '../../../subgraphs/membership/clock/membership-clock.worker.js';
import { ChatWebhookWorker } from '../../../subgraphs/membership/webhook/chat-webhook.worker.js';
import { verifyWebhook } from '../../../subgraphs/membership/webhook/webhook-signature.js';
import type { Principal } from '../../../core/principal.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor, run } from '../../support/subgraph-harness.js';
import { startReceiver } from './webhook-receiver.js';

const LEAD_DAYS = 14;
const WEBHOOKS = { allowPrivateTargets: true, timeoutMs: 2000 };

let testbed: MembershipTestbed;
let subgraph: Subgraph;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph({ webhooks: WEBHOOKS, membership: { renewalReminderDays: LEAD_DAYS } }));
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await testbed?.close();
});

async function ok<T = Record<string, any>>(principal: Principal, source: string, variables?: Record<string, unknown>): Promise<T> {
  const result = await run<T>(subgraph, principal, source, variables);
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data!;
}

const now = new Date();
/** The date `days` from today (negative: ago), in UTC. */
const day = (days: number) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + days)).toISOString().slice(0, 10);
/** Joined so that a yearly period ends `days` from today. */
const endingIn = (days: number) => new Date(Date.UTC(now.getUTCFullYear() - 1, now.getUTCMonth(), now.getUTCDate() + days + 1)).toISOString().slice(0, 10);

let emails = 0;
async function member(principal: Principal, joinedOn: string, categoryId?: string): Promise<{ id: string; periodEnd: string | null; status: string }> {
  const created = await ok(principal, `mutation($email: String!, $joinedOn: LocalDate, $categoryId: ID) { createMember(name: "Due", email: $email, joinedOn: $joinedOn, categoryId: $categoryId) { id periodEnd status } }`, {
    email: `due.${++emails}@example.org`,
    joinedOn,
    categoryId,
  });
  return created.createMember;
}

async function category(principal: Principal, args: string): Promise<string> {
  return (await ok(principal, `mutation { createMemberCategory(name: "C${++emails}", feeAmount: 0, currency: "EUR", ${args}) { id } }`)).createMemberCategory.id;
}

async function listed(principal: Principal, renewalDue: boolean): Promise<string[]> {
  const data = await ok(principal, `query($renewalDue: Boolean) { members(renewalDue: $renewalDue, limit: 100) { data { id } } }`, { renewalDue });
  return (data.members.data as { id: string }[]).map((m) => m.id).sort();
}

async function webhook(principal: Principal, path: string): Promise<string> {
  const created = await ok(principal, `mutation($url: String!) { createChatWebhook(url: $url, eventTypes: ["member.renewal_due"]) { secret webhook { id } } }`, { url: receiver.url(path) });
  return created.createChatWebhook.secret;
}

describe('renewal reminders', () => {
  it('list the members due (ACTIVE or GRACE, period ending within the lead time) and send member.renewal_due once per period, to their own account and mode only', async () => {
    const owner = principalFor();
    const stranger = principalFor();
    const sandbox = { ...owner, mode: 'test' as const, keyId: `${owner.keyId}-test` };
    const graceful = await category(owner, 'period: YEARLY, graceDays: 30');
    const lifetime = await category(owner, 'period: LIFETIME');

    const soon = await member(owner, endingIn(10));
    const today = await member(owner, endingIn(0));
    const inGrace = await member(owner, endingIn(-5), graceful);
    const later = await member(owner, endingIn(LEAD_DAYS + 6));
    const lapsed = await member(owner, endingIn(-40));
    const forever = await member(owner, day(-3), lifetime);
    const suspended = await member(owner, endingIn(3));
    await ok(owner, `mutation($id: ID!) { suspendMember(id: $id) { id } }`, { id: suspended.id });
    const theirs = await member(stranger, endingIn(2));
    const sandboxed = await member(sandbox, endingIn(2));
    expect(inGrace.status).toBe('GRACE');

    const due = [soon.id, today.id, inGrace.id].sort();
    expect(await listed(owner, true)).toEqual(due);
    expect(await listed(owner, false)).toEqual([later.id, lapsed.id, forever.id, suspended.id].sort());
    expect(await listed(stranger, true)).toEqual([theirs.id]);

    const ownerSecret = await webhook(owner, '/owner');
    await webhook(stranger, '/stranger');
    await webhook(sandbox, '/sandbox');

    // Two instances sweeping at once: each member is reminded once.
    const clocks = [0, 1].map(() => new MembershipClockWorker(subgraph.orm, { settings: { renewalReminderDays: LEAD_DAYS } }));
    const swept = await Promise.all(clocks.map((clock) => clock.runOnce()));
    expect(swept.reduce((sum, s) => sum + s.renewalReminders, 0)).toBe(due.length + 2);
    expect((await clocks[0].runOnce()).renewalReminders, 'a second sweep finds nothing new').toBe(0);

    const delivery = new ChatWebhookWorker(subgraph.orm, { settings: WEBHOOKS });
    while ((await delivery.runOnce()) > 0);
    const toOwner = receiver.at('/owner');
    const reminded = toOwner.map((r) => JSON.parse(r.body) as { type: string; data: { member: { id: string; periodEnd: string; status: string }; livemode: boolean } });
    expect(reminded.map((r) => r.type)).toEqual(Array(3).fill('member.renewal_due'));
    expect(reminded.map((r) => r.data.member.id).sort()).toEqual(due);
    expect(reminded.find((r) => r.data.member.id === inGrace.id)?.data).toMatchObject({ member: { status: 'GRACE', periodEnd: inGrace.periodEnd }, livemode: true });
    for (const r of toOwner) {
      expect(() => verifyWebhook(ownerSecret, { id: String(r.headers['webhook-id']), timestamp: String(r.headers['webhook-timestamp']), signature: String(r.headers['webhook-signature']) }, r.body)).not.toThrow();
    }
    expect(receiver.at('/stranger').map((r) => JSON.parse(r.body).data.member.id)).toEqual([theirs.id]);
    expect(receiver.at('/sandbox').map((r) => JSON.parse(r.body).data)).toEqual([expect.objectContaining({ member: expect.objectContaining({ id: sandboxed.id }), livemode: false })]);
  });

  it('remind again for the next period once a renewal moved the period end, and never for an archived member', async () => {
    const owner = principalFor();
    const renewing = await member(owner, endingIn(5));
    const archived = await member(owner, endingIn(5));
    await ok(owner, `mutation($id: ID!) { deleteMember(id: $id) { id } }`, { id: archived.id });
    const clock = new MembershipClockWorker(subgraph.orm, { settings: { renewalReminderDays: LEAD_DAYS } });
    await clock.runOnce();
    const reminded = async () => (await subgraph.orm.em.getConnection().execute(`select id, to_char(renewal_reminded_for, 'YYYY-MM-DD') as at from membership.member where id in (?, ?)`, [renewing.id, archived.id])) as { id: string; at: string | null }[];
    expect(Object.fromEntries((await reminded()).map((r) => [r.id, r.at]))).toEqual({ [renewing.id]: renewing.periodEnd, [archived.id]: null });
    const renewed = (await ok(owner, `mutation($id: ID!) { renewMember(id: $id) { periodEnd } }`, { id: renewing.id })).renewMember.periodEnd as string;
    expect(await listed(owner, true)).toEqual([]);
    // With a lead time reaching the new end, the member is due again and reminded of it.
    const farClock = new MembershipClockWorker(subgraph.orm, { settings: { renewalReminderDays: 400 } });
    expect((await farClock.runOnce()).renewalReminders).toBeGreaterThanOrEqual(1);
    expect((await reminded()).find((r) => r.id === renewing.id)?.at).toBe(renewed);
  });
});
