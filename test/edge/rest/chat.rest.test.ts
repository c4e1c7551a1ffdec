import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';
import { startReceiver } from '../../subgraphs/membership/webhook-receiver.js';

let platform: TestPlatform;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  // The receiver runs on loopback, so private targets are allowed here, as in development.
  platform = await startTestPlatform({ webhooks: { allowPrivateTargets: true, timeoutMs: 2000 } });
  receiver = await startReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await platform?.close();
});

let accountCounter = 0;
const freshKey = () => platform.issueKey(`chat-rest-${++accountCounter}`, 'live');

async function body<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function expectError(response: Response, status: number, code: string, param: string | null) {
  const parsed = await body<{ error: { code: string; param: string | null; message: string } }>(response, status);
  expect(parsed.error).toMatchObject({ code, param });
  return parsed.error;
}

async function member(key: string, name: string): Promise<string> {
  const email = `${name.toLowerCase()}-${accountCounter}@example.org`;
  return (await body<{ id: string }>(await platform.request('/api/v1/members', { method: 'POST', key, json: { name, email } }), 201)).id;
}

async function graphql<T>(key: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const result = await body<{ data: T; errors?: unknown }>(await platform.request('/graphql', { method: 'POST', key, json: { query, variables } }), 200);
  expect(result.errors).toBeUndefined();
  return result.data;
}

describe('the chat routes', () => {
  it('POST /chat/send answers 201 with the message; GET /chat/messages and GET /chat/channels list what the acting member sees', async () => {
    const key = await freshKey();
    const [ann, bob, cy] = [await member(key, 'Ann'), await member(key, 'Bob'), await member(key, 'Cy')];
    const { createChatChannel: team } = await graphql<{ createChatChannel: { id: string } }>(
      key,
      'mutation($a: ID!, $m: [ID!]) { createChatChannel(asMember: $a, name: "team", private: true, memberIds: $m) { id } }',
      { a: ann, m: [bob] },
    );
    const sent = await body<Record<string, unknown>>(
      await platform.request('/api/v1/chat/send', { method: 'POST', key, json: { asMember: ann, mode: 'DIRECT', to: bob, text: 'Hi Bob' } }),
      201,
    );
    expect(sent).toMatchObject({ mode: 'DIRECT', text: 'Hi Bob', livemode: true, deletedAt: null });
    await body(await platform.request('/api/v1/chat/send', { method: 'POST', key, json: { asMember: bob, mode: 'DIRECT', to: ann, text: 'Hi Ann' } }), 201);
    await body(await platform.request('/api/v1/chat/send', { method: 'POST', key, json: { asMember: bob, mode: 'CHANNEL', channelId: team.id, text: 'Team!' } }), 201);

    const conversation = await body<{ data: { text: string }[]; hasMore: boolean; nextCursor: string | null }>(
      await platform.request(`/api/v1/chat/messages?asMember=${ann}&withMember=${bob}&limit=1`, { key }),
      200,
    );
    expect(conversation.data.map((m) => m.text)).toEqual(['Hi Ann']);
    expect(conversation.hasMore).toBe(true);
    const older = await body<{ data: { text: string }[] }>(
      await platform.request(`/api/v1/chat/messages?asMember=${ann}&withMember=${bob}&after=${conversation.nextCursor}`, { key }),
      200,
    );
    expect(older.data.map((m) => m.text)).toEqual(['Hi Bob']);

    const channels = async (asMember: string) =>
      (await body<{ data: { name: string; visibility: string }[] }>(await platform.request(`/api/v1/chat/channels?asMember=${asMember}`, { key }), 200)).data;
    expect(await channels(bob)).toEqual([expect.objectContaining({ name: 'team', visibility: 'PRIVATE' })]);
    expect(await channels(cy)).toEqual([]);
    await expectError(await platform.request(`/api/v1/chat/messages?asMember=${cy}&channelId=${team.id}`, { key }), 404, 'channel_not_found', 'channelId');
  });

  it('refuses bad sends with the error codes', async () => {
    const key = await freshKey();
    const [ann, bob] = [await member(key, 'Ann'), await member(key, 'Bob')];
    const { createChatChannel: open } = await graphql<{ createChatChannel: { id: string } }>(
      key,
      'mutation($a: ID!) { createChatChannel(asMember: $a, name: "open") { id } }',
      { a: ann },
    );
    const sendAs = (json: Record<string, unknown>) => platform.request('/api/v1/chat/send', { method: 'POST', key, json });
    await expectError(await sendAs({ asMember: bob, mode: 'CHANNEL', channelId: open.id, text: 'x' }), 403, 'not_channel_member', 'channelId');
    await expectError(await sendAs({ asMember: ann, mode: 'DIRECT', to: '00000000-0000-4000-8000-ffffffffffff', text: 'x' }), 400, 'unknown_recipient', 'to');
    const tooLong = await expectError(await sendAs({ asMember: ann, mode: 'BROADCAST', text: 'x'.repeat(4001) }), 400, 'message_too_long', 'text');
    expect(tooLong.message).toContain('4000');
    await expectError(await sendAs({ asMember: '00000000-0000-4000-8000-ffffffffffff', mode: 'BROADCAST', text: 'x' }), 400, 'unknown_member', 'asMember');
    // Another account's key does not reach this account's members.
    const otherKey = await freshKey();
    await expectError(
      await platform.request('/api/v1/chat/send', { method: 'POST', key: otherKey, json: { asMember: ann, mode: 'BROADCAST', text: 'x' } }),
      400,
      'unknown_member',
      'asMember',
    );
  });

  it('POST /chat/webhooks answers 201 with the secret once, and the platform delivers signed events', async () => {
    const key = await freshKey();
    const ann = await member(key, 'Ann');
    const created = await body<{ secret: string; webhook: { id: string; url: string; eventTypes: string[]; enabled: boolean } }>(
      await platform.request('/api/v1/chat/webhooks', { method: 'POST', key, json: { url: receiver.url('/rest-hook'), eventTypes: ['message.created'] } }),
      201,
    );
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.webhook).toMatchObject({ url: receiver.url('/rest-hook'), eventTypes: ['message.created'], enabled: true });
    await expectError(
      await platform.request('/api/v1/chat/webhooks', { method: 'POST', key, json: { url: 'gopher://example.com', eventTypes: ['message.created'] } }),
      400,
      'webhook_url_refused',
      'url',
    );
    await body(await platform.request('/api/v1/chat/send', { method: 'POST', key, json: { asMember: ann, mode: 'BROADCAST', text: 'Hello all' } }), 201);
    const deadline = Date.now() + 10_000;
    while (receiver.at('/rest-hook').length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const [delivery] = receiver.at('/rest-hook');
    expect(JSON.parse(delivery.body)).toMatchObject({ type: 'message.created', data: { text: 'Hello all', mode: 'BROADCAST', senderId: ann } });
    const id = String(delivery.headers['webhook-id']);
    const timestamp = String(delivery.headers['webhook-timestamp']);
    const expected = createHmac('sha256', Buffer.from(created.secret.slice(6), 'base64')).update(`${id}.${timestamp}.${delivery.body}`).digest('base64');
    expect(delivery.headers['webhook-signature']).toBe(`v1,${expected}`);
    const log = await graphql<{ chatWebhookDeliveries: { data: { status: string; attemptLog: { statusCode: number }[] }[] } }>(
      key,
      'query($w: ID!) { chatWebhookDeliveries(webhookId: $w) { data { status attemptLog { statusCode } } } }',
      { w: created.webhook.id },
    );
    // The log is written just after the receiver answered.
    expect(log.chatWebhookDeliveries.data).toHaveLength(1);
  });
});
