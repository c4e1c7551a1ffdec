import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';
import { openedWithProbes, probeUntil, receivedBeforeMarker, until } from '../support/subscription-probe.js';

let platform: TestPlatform;
let admin: string;
let textKey: string;
const clients: Client[] = [];

beforeAll(async () => {
  platform = await startTestPlatform({ subscriptions: { ...testConfig().subscriptions, perSocket: 3 } });
  admin = await platform.issueKey('ops', 'admin');
  textKey = await platform.issueKey('watcher', 'text');
});
afterAll(async () => {
  for (const client of clients) await client.dispose();
  await platform?.close();
});

function wsClient(key: string | undefined, onClose?: (event: { code: number; reason: string }) => void): Client {
  const client = createClient({
    url: platform.graphqlUrl.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: key ? { authorization: `Bearer ${key}` } : {},
    retryAttempts: 0,
    on: { closed: (event) => onClose?.(event as { code: number; reason: string }) },
  });
  clients.push(client);
  return client;
}

/** Collects the results of one subscription until `count` arrived (or it ends). */
function collect<T>(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const results: T[] = [];
  const iterator = client.iterate<T>({ query, variables });
  const done = (async () => {
    for await (const result of iterator) results.push(result as T);
  })();
  return { results, stop: () => iterator.return?.(), done };
}

const setStatus = (id: string, status: string) =>
  platform.request('/graphql', { method: 'POST', key: admin, json: { query: `mutation { setProviderStatus(id: "${id}", status: ${status}) { id status } }` } });

describe('graphql-ws through the gateway', () => {
  it('delivers live provider status changes, in order, with the client aliases', async () => {
    const client = wsClient(textKey);
    const sub = collect<{ data: { change: { providerId: string; now: string } } }>(
      client,
      'subscription { change: providerStatusChanged(id: "provider_a") { providerId: id now: status } }',
    );
    // Open once a probe (provider_a set to the status it has) has come through the gateway.
    await probeUntil(() => sub.results.length > 0, () => setStatus('provider_a', 'OPERATIONAL'), 'a probe status change');
    const start = sub.results.length;
    for (const status of ['DEGRADED', 'DOWN', 'OPERATIONAL']) expect((await setStatus('provider_a', status)).status).toBe(200);
    await setStatus('provider_d', 'DOWN');
    // A last change of provider_a comes after provider_d's, had that one (wrongly) been delivered.
    await setStatus('provider_a', 'DEGRADED');
    await until(() => sub.results.length >= start + 4, 'four status changes');
    expect(sub.results.slice(start).map((r) => r.data.change)).toEqual([
      { providerId: 'provider_a', now: 'DEGRADED' },
      { providerId: 'provider_a', now: 'DOWN' },
      { providerId: 'provider_a', now: 'OPERATIONAL' },
      { providerId: 'provider_a', now: 'DEGRADED' },
    ]);
    await sub.stop();
    await setStatus('provider_a', 'OPERATIONAL');
  });

  it('runs queries and mutations over the socket too', async () => {
    const client = wsClient(textKey);
    const result = await new Promise<unknown>((resolve, reject) =>
      client.subscribe({ query: '{ provider(id: "provider_d") { id name } }' }, { next: resolve, error: reject, complete: () => {} }),
    );
    expect(result).toEqual({ data: { provider: { id: 'provider_d', name: 'Provider D' } } });
  });

  it('closes the socket with 4401 for a missing or unknown key', async () => {
    for (const key of [undefined, 'sk_live_unknown']) {
      let closed: { code: number; reason: string } | undefined;
      const client = wsClient(key, (event) => (closed = event));
      await expect(
        new Promise((resolve, reject) => client.subscribe({ query: '{ providers { id } }' }, { next: resolve, error: reject, complete: () => {} })),
      ).rejects.toBeTruthy();
      await until(() => closed !== undefined, 'the socket to close');
      expect(closed!.code).toBe(4401);
    }
  });

  it('caps the subscriptions of one socket', async () => {
    const client = wsClient(textKey);
    const subs = [1, 2, 3].map(() => collect(client, 'subscription { providerStatusChanged { id } }'));
    // All three are open once a probe status change has reached each of them.
    await probeUntil(() => subs.every((sub) => sub.results.length > 0), () => setStatus('provider_a', 'OPERATIONAL'), 'a probe on all three subscriptions');
    const fourth = await new Promise<unknown>((resolve) =>
      client.subscribe({ query: 'subscription { providerStatusChanged { id } }' }, { next: resolve, error: resolve, complete: () => {} }),
    );
    expect(JSON.stringify(fourth)).toContain('too_many_subscriptions');
    for (const sub of subs) await sub.stop();
  });

  it('refuses a subscription document the edge limits forbid', async () => {
    const client = wsClient(textKey);
    const deep = `subscription { providerStatusChanged { ${'id '.repeat(1200)} } }`;
    const answer = await new Promise<unknown>((resolve) =>
      client.subscribe({ query: deep }, { next: resolve, error: resolve, complete: () => resolve('complete') }),
    );
    expect(JSON.stringify(answer)).toMatch(/token/i);
  });
});

describe('chat messages through the gateway', () => {
  const gql = async (key: string, query: string, variables: Record<string, unknown> = {}) => {
    const response = await platform.request('/graphql', { method: 'POST', key, json: { query, variables } });
    const body = (await response.json()) as { data?: any; errors?: unknown[] };
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    return body.data;
  };

  it("delivers each message once, in order, with the sender's job postings from the marketplace, until the subscriber leaves", async () => {
    const live = await platform.issueKey('chat-gw', 'live');
    const member = async (name: string) =>
      (await gql(live, 'mutation($n: String!, $e: String!) { createMember(name: $n, email: $e) { id } }', { n: name, e: `${name.toLowerCase()}@example.org` })).createMember.id as string;
    const [ann, bob] = [await member('Ann'), await member('Bob')];
    await gql(live, 'mutation($p: ID!) { createJobPosting(title: "Editor", description: "x", postedBy: $p) { id } }', { p: ann });
    const channel = (
      await gql(live, 'mutation($a: ID!, $m: [ID!]) { createChatChannel(asMember: $a, name: "board", private: true, memberIds: $m) { id } }', { a: ann, m: [bob] })
    ).createChatChannel.id as string;

    const client = wsClient(live);
    const sub = collect<{ data: { m: { text: string; from: { name: string; jobs: { title: string }[] } } } }>(
      client,
      'subscription($me: ID!, $c: ID!) { m: messageAdded(asMember: $me, channelId: $c) { text from: sender { name jobs: jobPostings { title } } } }',
      { me: bob, c: channel },
    );
    const send = (text: string) =>
      gql(live, 'mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: ann, c: channel, t: text });
    const textOf = (result: (typeof sub.results)[number]) => result.data?.m.text;
    // Open once Ann's probe messages come through the gateway.
    const start = await openedWithProbes(sub.results, send, textOf);
    for (const text of ['one', 'two', 'three']) await send(text);
    await until(() => sub.results.length >= start + 3, 'three messages');
    expect(sub.results.slice(start).map((r) => r.data.m)).toEqual(
      ['one', 'two', 'three'].map((text) => ({ text, from: { name: 'Ann', jobs: [{ title: 'Editor' }] } })),
    );

    await gql(live, 'mutation($a: ID!, $c: ID!) { leaveChatChannel(asMember: $a, channelId: $c) { id } }', { a: bob, c: channel });
    await send('after bob left');
    // Ann adds Bob back and sends a marker: it reaches his subscription, and "after bob left",
    // sent before it while he was out, must not have come before it.
    await gql(live, 'mutation($a: ID!, $c: ID!, $b: ID!) { joinChatChannel(asMember: $a, channelId: $c, memberId: $b) { id } }', { a: ann, c: channel, b: bob });
    const before = await receivedBeforeMarker(sub.results, send, textOf, { from: start, label: 'back in' });
    expect(before.map(textOf)).toEqual(['one', 'two', 'three']);
    await sub.stop();
  });

  it("writes passed-through events to each subscriber's socket in order, shared by one principal's subscribers, and none after one completes", async () => {
    const live = await platform.issueKey('chat-direct', 'live');
    const member = async (name: string) =>
      (await gql(live, 'mutation($n: String!, $e: String!) { createMember(name: $n, email: $e) { id } }', { n: name, e: `${name.toLowerCase()}-direct@example.org` })).createMember.id as string;
    const [cy, di, ed] = [await member('Cy'), await member('Di'), await member('Ed')];
    const channel = (
      await gql(live, 'mutation($a: ID!, $m: [ID!]) { createChatChannel(asMember: $a, name: "direct", private: true, memberIds: $m) { id } }', { a: cy, m: [di, ed] })
    ).createChatChannel.id as string;
    // The owning subgraph answers exactly what is asked: these events pass through the edge as they come.
    const query = 'subscription($me: ID!, $c: ID!) { messageAdded(asMember: $me, channelId: $c) { text id } }';

    // Di speaks graphql-transport-ws by hand, so the frames the edge writes are seen as they are.
    type Frame = { type: string; id?: string; payload?: { data?: { messageAdded?: { text: string } } } };
    const raw = new WebSocket(platform.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
    const frames: Frame[] = [];
    raw.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
    await new Promise((resolve, reject) => raw.once('open', resolve).once('error', reject));
    raw.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${live}` } }));
    await until(() => frames.some((frame) => frame.type === 'connection_ack'), 'the connection to be acknowledged');
    raw.send(JSON.stringify({ id: 'di-1', type: 'subscribe', payload: { query, variables: { me: di, c: channel } } }));
    /** A ping's pong: the edge has handled every frame Di sent before it, and written everything it wrote to Di before it. */
    const settled = async () => {
      const pongs = frames.filter((frame) => frame.type === 'pong').length;
      raw.send(JSON.stringify({ type: 'ping' }));
      await until(() => frames.filter((frame) => frame.type === 'pong').length > pongs, 'a pong');
    };
    const atDi = () => frames.filter((frame) => frame.type === 'next' && frame.id === 'di-1').map((frame) => frame.payload!.data!.messageAdded!.text);

    type Event = { data: { messageAdded: { text: string; id: string } } };
    const forEd = collect<Event>(wsClient(live), query, { me: ed, c: channel });
    const send = (text: string) =>
      gql(live, 'mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: cy, c: channel, t: text });
    const textOf = (result: Event) => result.data?.messageAdded.text;
    // Both open once probes come through to both; every probe is in before the "ready" marker.
    await probeUntil(() => atDi().length > 0 && forEd.results.length > 0, (attempt) => send(`probe-${attempt}`), 'probes at both subscribers');
    await send('ready');
    await until(() => atDi().includes('ready') && forEd.results.some((r) => textOf(r) === 'ready'), 'the ready marker at both');
    const [startDi, startEd] = [atDi().indexOf('ready') + 1, forEd.results.findIndex((r) => textOf(r) === 'ready') + 1];
    // Sent without waiting for each other: every event once at each subscriber, in one order for both (the order they were published).
    await Promise.all(Array.from({ length: 12 }, (_, i) => send(`burst ${i}`)));
    // Then one after another: in exactly that order.
    for (const text of ['first', 'second', 'third']) await send(text);
    await until(() => atDi().length >= startDi + 15 && forEd.results.length >= startEd + 15, 'every message at both subscribers');
    const [fromDi, fromEd] = [atDi().slice(startDi), forEd.results.slice(startEd).map(textOf)];
    expect(fromDi).toEqual(fromEd);
    expect(fromDi.filter((text) => text.startsWith('burst')).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `burst ${i}`).sort());
    expect(fromDi.slice(-3)).toEqual(['first', 'second', 'third']);

    // Di completes; once the edge has handled that (a pong), nothing more is written for di-1.
    raw.send(JSON.stringify({ id: 'di-1', type: 'complete' }));
    await settled();
    const seen = atDi().length;
    await receivedBeforeMarker(forEd.results, send, textOf, { from: startEd, label: 'after di' });
    // Anything the edge wrote to Di with the marker came before this pong.
    await settled();
    expect(atDi().length, 'no event after the subscriber completed').toBe(seen);
    raw.close();
    await forEd.stop();
  });
});
