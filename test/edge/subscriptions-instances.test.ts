import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../core/logger.js';
import { startPlatform, type RunningPlatform } from '../../platform/platform.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';
import { redisServerMissing, startRedisServer, type RunningRedis } from '../support/redis-server.js';
import { openedWithProbes, probeUntil, receivedBeforeMarker, until } from '../support/subscription-probe.js';

const missing = redisServerMissing();

function subscriber(graphqlUrl: string, key: string, onClose?: (code: number) => void): Client {
  return createClient({
    url: graphqlUrl.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
    on: { closed: (event) => onClose?.((event as { code: number }).code) },
  });
}

describe.skipIf(missing)(`events across instances${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let redis: RunningRedis;
  let first: TestPlatform;
  let second: RunningPlatform;

  beforeAll(async () => {
    redis = await startRedisServer();
    first = await startTestPlatform({ redisUrl: redis.url });
    // A second platform (its own subgraphs and gateway) on the same database and Redis.
    second = await startPlatform(testConfig({ redisUrl: redis.url }), first.databaseUrl, createLogger('silent'));
  });
  afterAll(async () => {
    await second?.stop();
    await first?.close();
    await redis?.stop();
  });

  it('delivers an event published through one instance to a subscriber connected to the other', async () => {
    const admin = await first.issueKey('ops', 'admin');
    const watcher = await first.issueKey('watcher', 'text');
    const client = subscriber(second.graphqlUrl, watcher);
    const seen: unknown[] = [];
    const iterator = client.iterate({ query: 'subscription { providerStatusChanged(id: "provider_d") { id status } }' });
    const reading = (async () => {
      for await (const result of iterator) seen.push(result);
    })();
    const change = async () => {
      const changed = await first.request('/graphql', {
        method: 'POST',
        key: admin,
        json: { query: 'mutation { setProviderStatus(id: "provider_d", status: DEGRADED) { status } }' },
      });
      expect(changed.status).toBe(200);
    };
    // The change is its own probe: made through the first instance until the subscriber on the
    // second has it (the ones made before its subscription was listening are not for it).
    const sent = await probeUntil(() => seen.length > 0, change, 'the change to reach the other instance');
    expect(seen.length).toBeLessThanOrEqual(sent);
    expect(seen).toEqual(seen.map(() => ({ data: { providerStatusChanged: { id: 'provider_d', status: 'DEGRADED' } } })));
    await iterator.return?.();
    await reading;
    await client.dispose();
  });

  it('delivers a chat message sent through one instance to a subscriber on the other', async () => {
    const key = await first.issueKey('chat-instances', 'live');
    const gql = async (query: string, variables: Record<string, unknown> = {}) =>
      ((await (await first.request('/graphql', { method: 'POST', key, json: { query, variables } })).json()) as { data: any }).data;
    const ann = (await gql('mutation { createMember(name: "Ann", email: "ann@example.org") { id } }')).createMember.id;
    const bob = (await gql('mutation { createMember(name: "Bob", email: "bob@example.org") { id } }')).createMember.id;
    const channel = (await gql('mutation($a: ID!, $m: [ID!]) { createChatChannel(asMember: $a, name: "x", memberIds: $m) { id } }', { a: ann, m: [bob] })).createChatChannel.id;
    const client = subscriber(second.graphqlUrl, key);
    const seen: unknown[] = [];
    const iterator = client.iterate({ query: 'subscription($b: ID!, $c: ID!) { messageAdded(asMember: $b, channelId: $c) { text sender { name } } }', variables: { b: bob, c: channel } });
    const reading = (async () => {
      for await (const result of iterator) seen.push(result);
    })();
    const send = (text: string) => gql('mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: ann, c: channel, t: text });
    const textOf = (result: unknown) => (result as { data?: { messageAdded: { text: string } } }).data?.messageAdded.text;
    // Open once Ann's probes, sent through the first instance, reach the subscriber on the second.
    const start = await openedWithProbes(seen, send, textOf);
    await send('across');
    // Exactly once: nothing else came before the marker sent after it.
    expect(await receivedBeforeMarker(seen, send, textOf, { from: start })).toEqual([{ data: { messageAdded: { text: 'across', sender: { name: 'Ann' } } } }]);
    await iterator.return?.();
    await reading;
    await client.dispose();
  });
});

describe('websocket lifecycle', () => {
  it('pings idle sockets and closes them with 1001 when the gateway stops', async () => {
    const platform = await startTestPlatform({ subscriptions: { ...testConfig().subscriptions, keepAliveMs: 100 } });
    const key = await platform.issueKey('lifecycle', 'text');
    const admin = await platform.issueKey('lifecycle-ops', 'admin');
    const raw = new WebSocket(platform.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
    let pings = 0;
    raw.on('ping', () => (pings += 1));
    await new Promise((resolve) => raw.once('open', resolve));
    raw.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
    await new Promise((resolve) => raw.once('message', resolve));
    await until(() => pings >= 2, 'two pings', 3000);

    let closedWith: number | undefined;
    const client = subscriber(platform.graphqlUrl, key, (code) => (closedWith = code));
    const iterator = client.iterate({ query: 'subscription { providerStatusChanged { id } }' });
    let events = 0;
    const reading = (async () => {
      try {
        for await (const _ of iterator) events += 1;
      } catch {
        // the socket closing ends the subscription
      }
    })();
    // Stop the gateway with the subscription live: once a probe status change has come through.
    const probe = () =>
      platform.request('/graphql', { method: 'POST', key: admin, json: { query: 'mutation { setProviderStatus(id: "provider_a", status: OPERATIONAL) { id } }' } });
    await probeUntil(() => events > 0, probe, 'a probe status change');
    await platform.close();
    await until(() => closedWith !== undefined, 'the socket to close');
    expect(closedWith).toBe(1001);
    await reading;
    raw.terminate();
    await client.dispose();
  });
});
