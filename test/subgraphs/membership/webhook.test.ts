import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatMessage } from '../../../subgraphs/membership/chat/chat-message.entity.js';
import { ChatWebhookDelivery } from '../../../subgraphs/membership/webhook/chat-webhook-delivery.entity.js';
import { ChatWebhookWorker } from '../../../subgraphs/membership/webhook/chat-webhook.worker.js';
import pino from 'pino';
import { ChatWebhookService } from '../../../subgraphs/membership/webhook/chat-webhook.service.js';
import { checkWebhookTarget, isPrivateAddress, TARGET_NOT_ALLOWED, WebhookTargetError } from '../../../subgraphs/shared/ssrf-guard.js';
import { verifyWebhook } from '../../../subgraphs/membership/webhook/webhook-signature.js';
import type { Principal } from '../../../core/principal.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor, run } from '../../support/subgraph-harness.js';
import { firstError, newChannel, newMember, ok, send } from './chat-support.js';
import { startReceiver } from './webhook-receiver.js';

let subgraph: Subgraph;
let testbed: MembershipTestbed;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** Per path: statuses to answer in turn (the last one repeats); 'hang' never answers. */
const script = new Map<string, (number | 'hang')[]>();

const SETTINGS = { allowPrivateTargets: true, timeoutMs: 500 };

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph({ webhooks: SETTINGS }));
  receiver = await startReceiver((path, count) => {
    const answers = script.get(path) ?? [200];
    return answers[Math.min(count, answers.length) - 1];
  });
});

afterAll(async () => {
  await receiver?.close();
  await testbed?.close();
});

const CREATE = `mutation($url: String!, $eventTypes: [String!]!) {
  createChatWebhook(url: $url, eventTypes: $eventTypes) { secret webhook { id url eventTypes enabled disabledReason livemode } }
}`;
const DELIVERIES = `query($webhookId: ID!) {
  chatWebhookDeliveries(webhookId: $webhookId) {
    data { eventId eventType status attempts lastStatusCode lastError payload attemptLog { attempt statusCode durationMs error } }
  }
}`;
const WEBHOOKS = '{ chatWebhooks { data { id enabled disabledReason failingSince } } }';

interface DeliveryView {
  eventId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  payload: string;
  attemptLog: { attempt: number; statusCode: number | null; durationMs: number; error: string | null }[];
}

let pathCounter = 0;
async function register(principal: Principal, eventTypes: string[], answers: (number | 'hang')[] = [200]) {
  const path = `/hook-${++pathCounter}`;
  script.set(path, answers);
  const created = ok(await run<{ createChatWebhook: { secret: string; webhook: { id: string } } }>(subgraph, principal, CREATE, { url: receiver.url(path), eventTypes })).createChatWebhook;
  return { path, id: created.webhook.id, secret: created.secret };
}

async function deliveries(principal: Principal, webhookId: string): Promise<DeliveryView[]> {
  return ok(await run<{ chatWebhookDeliveries: { data: DeliveryView[] } }>(subgraph, principal, DELIVERIES, { webhookId })).chatWebhookDeliveries.data;
}

const worker = (options: ConstructorParameters<typeof ChatWebhookWorker>[1] = {}) =>
  new ChatWebhookWorker(subgraph.orm, { settings: SETTINGS, retryScheduleMs: [40, 40], ...options });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The Standard Webhooks check, written out from the specification rather than with our signer. */
function specSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

describe('registering endpoints', () => {
  it('returns a whsec_ secret once and never lists it again', async () => {
    const principal = principalFor();
    const result = ok(await run<{ createChatWebhook: { secret: string; webhook: { eventTypes: string[]; enabled: boolean; livemode: boolean } } }>(
      subgraph, principal, CREATE, { url: receiver.url('/x'), eventTypes: ['message.created', 'channel.created'] },
    )).createChatWebhook;
    expect(result.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(result.secret.slice(6), 'base64')).toHaveLength(24);
    expect(result.webhook).toMatchObject({ eventTypes: ['message.created', 'channel.created'], enabled: true, livemode: true });
    const listed = await run(subgraph, principal, '{ chatWebhooks { data { id url } } }');
    expect(JSON.stringify(listed)).not.toContain(result.secret);
    const secretField = await run(subgraph, principal, '{ chatWebhooks { data { secret } } }');
    expect(secretField.errors?.[0].message).toMatch(/Cannot query field "secret"/);
  });

  it('refuses unknown event types, non-http schemes and (without the setting) private addresses', async () => {
    const principal = principalFor();
    expect(firstError(await run(subgraph, principal, CREATE, { url: receiver.url('/x'), eventTypes: ['message.exploded'] })).extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'unknown_event_type',
      param: 'eventTypes',
    });
    expect(firstError(await run(subgraph, principal, CREATE, { url: 'ftp://example.com/x', eventTypes: ['message.created'] })).extensions).toMatchObject({
      reason: 'webhook_url_refused',
      param: 'url',
    });
    for (const url of [
      'http://127.0.0.1/x',
      'http://localhost:8080/x',
      'http://10.0.0.8/',
      'http://172.20.1.1/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://0.0.0.0/',
      'http://[::1]/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://224.0.0.1/',
    ]) {
      await expect(checkWebhookTarget(url, false), url).rejects.toHaveProperty('message', TARGET_NOT_ALLOWED);
    }
    await expect(checkWebhookTarget('http://93.184.215.14/hook', false)).resolves.toBeInstanceOf(URL);
    await expect(checkWebhookTarget('http://[2606:4700::1111]/hook', false)).resolves.toBeInstanceOf(URL);
    expect(isPrivateAddress('8.8.8.8')).toBe(false);
    expect(isPrivateAddress('100.64.0.1')).toBe(true);
  });

  it('refuses the reserved ranges that tunnel to, document or stand in for other addresses', async () => {
    for (const address of [
      '2002:7f00:1::1', // 6to4 of 127.0.0.1
      '2002:a00:1::', // 6to4 of 10.0.0.1
      '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
      '2001:db8::1', // documentation
      '3fff::1', // documentation
      '192.0.2.10', // TEST-NET-1
      '198.51.100.7', // TEST-NET-2
      '203.0.113.9', // TEST-NET-3
      '192.88.99.1', // 6to4 relay anycast
      '64:ff9b:1::a00:1', // local-use NAT64
      '100::1', // discard-only
      '2001:2::1', // benchmarking
      'fec0::1', // site-local
      '::7f00:1', // IPv4-compatible 127.0.0.1
      '::ffff:0:a00:1', // IPv4-translated 10.0.0.1
      '::ffff:a00:1', // IPv4-mapped 10.0.0.1, hexadecimal spelling
    ]) {
      expect(isPrivateAddress(address), address).toBe(true);
      const host = address.includes(':') ? `[${address}]` : address;
      await expect(checkWebhookTarget(`https://${host}/hook`, false), address).rejects.toHaveProperty('message', TARGET_NOT_ALLOWED);
    }
    // Neighbours of those ranges stay reachable.
    for (const address of ['2001:4860:4860::8888', '2003::1', '192.0.3.1', '198.51.101.1', '203.0.114.1', '::ffff:8.8.8.8', '2a00:1450:4001::1']) {
      expect(isPrivateAddress(address), address).toBe(false);
    }
  });

  it('tells the tenant only that the target is not allowed, and the log what it resolved to', async () => {
    const principal = principalFor();
    const lines: { detail?: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const service = new ChatWebhookService(subgraph.orm.em.fork(), principal, { allowPrivateTargets: false, timeoutMs: 500 }, logger);
    for (const url of ['http://localhost:8080/x', 'http://10.1.2.3/x', 'http://[fd12::3]/x', 'http://host.that-does-not-resolve.invalid/x']) {
      const refused = await service.create({ url, eventTypes: ['message.created'] }).then(
        () => expect.unreachable(`${url} was accepted`),
        (error: unknown) => error as { message: string; extensions: Record<string, unknown> },
      );
      expect(refused.message, url).toBe(TARGET_NOT_ALLOWED);
      expect(refused.extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'webhook_url_refused', param: 'url' });
    }
    const details = lines.map((line) => line.detail).join('\n');
    expect(details).toMatch(/localhost resolves to (127\.0\.0\.1|::1)/);
    expect(details).toContain('10.1.2.3 resolves to 10.1.2.3');
    expect(details).toContain('host.that-does-not-resolve.invalid does not resolve');
    const error = await checkWebhookTarget('http://localhost/', false).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookTargetError);
    expect(String((error as Error).message)).not.toMatch(/127\.0\.0\.1|::1/);
  });
});

describe('delivering', () => {
  it('posts a signed {type, timestamp, data} body for each chosen event, and nothing else', async () => {
    const principal = principalFor();
    const [a, b] = [await newMember(subgraph, principal), await newMember(subgraph, principal)];
    const hook = await register(principal, ['message.created', 'message.updated', 'message.deleted']);
    const channelsOnly = await register(principal, ['channel.created']);
    const message = await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'hello' });
    await run(subgraph, principal, 'mutation($a: ID!, $id: ID!) { editChatMessage(asMember: $a, id: $id, text: "hello!") { id } }', { a, id: message.id });
    await run(subgraph, principal, 'mutation($a: ID!, $id: ID!) { deleteChatMessage(asMember: $a, id: $id) { id } }', { a, id: message.id });
    await worker().runOnce();
    const got = receiver.at(hook.path);
    expect(got.map((d) => JSON.parse(d.body).type).sort()).toEqual(['message.created', 'message.deleted', 'message.updated']);
    expect(receiver.at(channelsOnly.path)).toEqual([]);
    const created = got.find((d) => JSON.parse(d.body).type === 'message.created')!;
    const body = JSON.parse(created.body);
    expect(body).toEqual({
      type: 'message.created',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      data: expect.objectContaining({ id: message.id, mode: 'DIRECT', text: 'hello', senderId: a, recipientId: b, channelId: null, livemode: true }),
    });
    const headers = { id: String(created.headers['webhook-id']), timestamp: String(created.headers['webhook-timestamp']), signature: String(created.headers['webhook-signature']) };
    expect(headers.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(Math.abs(Number(headers.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    expect(headers.signature).toBe(specSignature(hook.secret, headers.id, headers.timestamp, created.body));
    expect(verifyWebhook(hook.secret, headers, created.body)).toBe(true);
    expect(verifyWebhook(hook.secret, headers, created.body.replace('hello', 'HELLO'))).toBe(false);
    expect(created.headers['content-type']).toBe('application/json');
    const log = await deliveries(principal, hook.id);
    expect(log.every((d) => d.status === 'SUCCEEDED' && d.attempts === 1 && d.attemptLog[0].statusCode === 200)).toBe(true);
  });

  it('reports channel creation and members joining and leaving', async () => {
    const principal = principalFor();
    const [a, b] = [await newMember(subgraph, principal), await newMember(subgraph, principal)];
    const hook = await register(principal, ['channel.created', 'channel.member_joined', 'channel.member_left']);
    const channelId = await newChannel(subgraph, principal, a, 'events');
    await run(subgraph, principal, 'mutation($a: ID!, $c: ID!) { joinChatChannel(asMember: $a, channelId: $c) { id } }', { a: b, c: channelId });
    await run(subgraph, principal, 'mutation($a: ID!, $c: ID!) { leaveChatChannel(asMember: $a, channelId: $c) { id } }', { a: b, c: channelId });
    await worker().runOnce();
    const bodies = receiver.at(hook.path).map((d) => JSON.parse(d.body));
    expect(bodies.map((b) => b.type).sort()).toEqual(['channel.created', 'channel.member_joined', 'channel.member_left']);
    expect(bodies.find((x) => x.type === 'channel.created').data).toMatchObject({ id: channelId, name: 'events', visibility: 'PUBLIC', memberIds: [a] });
    expect(bodies.find((x) => x.type === 'channel.member_left').data).toMatchObject({ channelId, memberId: b });
  });

  it('writes the outbox in the transaction: nothing for a refused message, and a later worker delivers what an earlier one never sent', async () => {
    const principal = principalFor();
    const [a, b] = [await newMember(subgraph, principal), await newMember(subgraph, principal)];
    const hook = await register(principal, ['message.created']);
    firstError(await run(subgraph, principal, 'mutation($a: ID!) { sendChatMessage(asMember: $a, mode: BROADCAST, text: "") { id } }', { a }));
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'kept' });
    // No worker ran: the event waits in the table, as it would across a crash or restart.
    const em = subgraph.orm.em.fork();
    expect(await em.count(ChatWebhookDelivery, { webhookId: hook.id, status: 'pending' as never })).toBe(1);
    expect(await em.count(ChatMessage, { accountId: principal.accountId })).toBe(1);
    await worker().runOnce();
    expect(receiver.at(hook.path).map((d) => JSON.parse(d.body).data.text)).toEqual(['kept']);
  });

  it('retries with backoff under the same webhook-id, and logs every attempt', async () => {
    const principal = principalFor();
    const a = await newMember(subgraph, principal);
    const hook = await register(principal, ['message.created'], [500, 503, 200]);
    await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'retry me' });
    const w = worker({ retryScheduleMs: [150, 150] });
    await w.runOnce();
    expect(await w.runOnce()).toBe(0); // not due yet: the backoff holds it back
    await pause(200);
    await w.runOnce();
    await pause(200);
    await w.runOnce();
    const got = receiver.at(hook.path);
    expect(got).toHaveLength(3);
    expect(new Set(got.map((d) => d.headers['webhook-id'])).size).toBe(1);
    expect(new Set(got.map((d) => d.body)).size).toBe(1);
    const [delivery] = await deliveries(principal, hook.id);
    expect(delivery).toMatchObject({ status: 'SUCCEEDED', attempts: 3, lastStatusCode: 200 });
    expect(delivery.attemptLog.map((x) => [x.attempt, x.statusCode, x.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 503, 'HTTP 503'],
      [3, 200, null],
    ]);
    const webhooks = ok(await run<{ chatWebhooks: { data: { id: string; failingSince: string | null }[] } }>(subgraph, principal, WEBHOOKS)).chatWebhooks.data;
    expect(webhooks.find((x) => x.id === hook.id)!.failingSince).toBeNull();
  });

  it('gives up after the schedule, times out a silent receiver, and disables an endpoint failing too long', async () => {
    const principal = principalFor();
    const a = await newMember(subgraph, principal);
    const hook = await register(principal, ['message.created'], ['hang']);
    await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'into the void' });
    const w = worker({ settings: { ...SETTINGS, timeoutMs: 100 }, retryScheduleMs: [10], disableAfterMs: 50 });
    await w.runOnce();
    await pause(60);
    await w.runOnce();
    const [delivery] = await deliveries(principal, hook.id);
    expect(delivery).toMatchObject({ status: 'FAILED', attempts: 2, lastStatusCode: null, lastError: 'timed out after 100 ms' });
    const webhook = ok(await run<{ chatWebhooks: { data: { id: string; enabled: boolean; disabledReason: string | null }[] } }>(subgraph, principal, WEBHOOKS)).chatWebhooks.data.find((x) => x.id === hook.id);
    expect(webhook).toMatchObject({ enabled: false, disabledReason: 'failing' });
    // A disabled endpoint gets no new events.
    await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'later' });
    expect(await deliveries(principal, hook.id)).toHaveLength(1);
  });

  it('disables an endpoint that answers 410 Gone at once', async () => {
    const principal = principalFor();
    const a = await newMember(subgraph, principal);
    const hook = await register(principal, ['message.created'], [410]);
    await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'one' });
    await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'two' });
    const w = worker({ batchSize: 1 });
    await w.runOnce();
    await w.runOnce();
    expect(receiver.at(hook.path)).toHaveLength(1);
    const log = await deliveries(principal, hook.id);
    expect(log.map((d) => [d.status, d.attempts]).sort()).toEqual([
      ['FAILED', 0],
      ['FAILED', 1],
    ]);
    const webhook = ok(await run<{ chatWebhooks: { data: { id: string; enabled: boolean; disabledReason: string | null }[] } }>(subgraph, principal, WEBHOOKS)).chatWebhooks.data.find((x) => x.id === hook.id);
    expect(webhook).toMatchObject({ enabled: false, disabledReason: 'gone' });
  });

  it('refuses a private address again at delivery time when the setting is off', async () => {
    const principal = principalFor();
    const a = await newMember(subgraph, principal);
    const hook = await register(principal, ['message.created']);
    // A name, checked when the connection is made (the DNS answer may have changed since registration).
    const byName = ok(await run<{ createChatWebhook: { webhook: { id: string } } }>(subgraph, principal, CREATE, {
      url: receiver.url('/by-name').replace('127.0.0.1', 'localhost'),
      eventTypes: ['message.created'],
    })).createChatWebhook.webhook;
    await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'blocked' });
    await worker({ settings: { allowPrivateTargets: false, timeoutMs: 500 } }).runOnce();
    expect(receiver.at(hook.path)).toEqual([]);
    expect(receiver.at('/by-name')).toEqual([]);
    for (const id of [hook.id, byName.id]) {
      const [delivery] = await deliveries(principal, id);
      expect(delivery).toMatchObject({ status: 'PENDING', attempts: 1, lastStatusCode: null });
      // The tenant reads the delivery log: it says no more than that the target is refused.
      expect(delivery.lastError).toBe(TARGET_NOT_ALLOWED);
    }
  });

  it('lets several workers share the outbox without sending anything twice', async () => {
    const principal = principalFor();
    const a = await newMember(subgraph, principal);
    const hook = await register(principal, ['message.created']);
    await Promise.all(Array.from({ length: 30 }, (_, i) => send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: `n${i}` })));
    const workers = [worker({ batchSize: 7 }), worker({ batchSize: 7 }), worker({ batchSize: 7 })];
    while ((await Promise.all(workers.map((w) => w.runOnce()))).some((n) => n > 0));
    const ids = receiver.at(hook.path).map((d) => d.headers['webhook-id']);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
  });

  it('runs on its own with start() and stop()', async () => {
    const principal = principalFor();
    const a = await newMember(subgraph, principal);
    const hook = await register(principal, ['message.created']);
    const w = worker({ pollIntervalMs: 20 });
    w.start();
    await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'polled' });
    const deadline = Date.now() + 3000;
    while (receiver.at(hook.path).length === 0 && Date.now() < deadline) await pause(20);
    await w.stop();
    expect(receiver.at(hook.path)).toHaveLength(1);
  });
});

describe('managing endpoints', () => {
  const ROTATE = 'mutation($id: ID!, $hours: Int) { rotateChatWebhookSecret(id: $id, expireOldAfterHours: $hours) { secret webhook { id previousSecretExpiresAt } } }';

  it('a rotated secret signs at once, and the old one signs beside it until it expires (Standard Webhooks: several signatures)', async () => {
    const principal = principalFor();
    const [a, b] = [await newMember(subgraph, principal), await newMember(subgraph, principal)];
    const hook = await register(principal, ['message.created']);
    const rotated = ok(await run<{ rotateChatWebhookSecret: { secret: string; webhook: { previousSecretExpiresAt: string } } }>(subgraph, principal, ROTATE, { id: hook.id, hours: 1 })).rotateChatWebhookSecret;
    expect(rotated.secret).not.toBe(hook.secret);
    expect(new Date(rotated.webhook.previousSecretExpiresAt).getTime()).toBeGreaterThan(Date.now());
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'rotated' });
    await worker().runOnce();
    const [overlap] = receiver.at(hook.path);
    const headers = { id: String(overlap.headers['webhook-id']), timestamp: String(overlap.headers['webhook-timestamp']), signature: String(overlap.headers['webhook-signature']) };
    // Both signatures, each checked from the specification, not with our signer.
    expect(headers.signature.split(' ')).toEqual([
      specSignature(rotated.secret, headers.id, headers.timestamp, overlap.body),
      specSignature(hook.secret, headers.id, headers.timestamp, overlap.body),
    ]);

    // Rotated again with no overlap: only the newest secret signs.
    const final = ok(await run<{ rotateChatWebhookSecret: { secret: string } }>(subgraph, principal, ROTATE, { id: hook.id, hours: 0 })).rotateChatWebhookSecret;
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'again' });
    await worker().runOnce();
    const last = receiver.at(hook.path).at(-1)!;
    expect(String(last.headers['webhook-signature'])).toBe(specSignature(final.secret, String(last.headers['webhook-id']), String(last.headers['webhook-timestamp']), last.body));
  });

  it('a disabled endpoint gets nothing until enabled; a deleted one is gone with its log', async () => {
    const principal = principalFor();
    const [a, b] = [await newMember(subgraph, principal), await newMember(subgraph, principal)];
    const hook = await register(principal, ['message.created']);
    const disabled = ok(await run<{ disableChatWebhook: { enabled: boolean; disabledReason: string } }>(subgraph, principal, 'mutation($id: ID!) { disableChatWebhook(id: $id) { enabled disabledReason } }', { id: hook.id })).disableChatWebhook;
    expect(disabled).toEqual({ enabled: false, disabledReason: 'disabled' });
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'while disabled' });
    await worker().runOnce();
    expect(receiver.at(hook.path)).toEqual([]);
    ok(await run(subgraph, principal, 'mutation($id: ID!) { enableChatWebhook(id: $id) { enabled } }', { id: hook.id }));
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'enabled again' });
    await worker().runOnce();
    expect(receiver.at(hook.path).map((d) => JSON.parse(d.body).data.text)).toEqual(['enabled again']);
    expect((await deliveries(principal, hook.id)).length).toBeGreaterThan(0);

    const deleted = ok(await run<{ deleteChatWebhook: { id: string; deleted: boolean } }>(subgraph, principal, 'mutation($id: ID!) { deleteChatWebhook(id: $id) { id deleted } }', { id: hook.id })).deleteChatWebhook;
    expect(deleted).toEqual({ id: hook.id, deleted: true });
    expect(firstError(await run(subgraph, principal, DELIVERIES, { webhookId: hook.id })).extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'webhook_not_found' });
    const left = await subgraph.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from "membership"."chat_webhook_delivery" where "webhook_id" = ?', [hook.id]);
    expect(left[0].n).toBe(0);
    // Another account cannot touch an endpoint it does not own.
    expect(firstError(await run(subgraph, principalFor(), 'mutation($id: ID!) { disableChatWebhook(id: $id) { id } }', { id: hook.id })).extensions).toMatchObject({ code: 'NOT_FOUND', param: 'id' });
  });
});
