import type { Socket } from 'node:net';
import { expect } from 'vitest';
import WebSocket from 'ws';
import type { SubscriptionLimits } from '../../edge/edge-settings.js';
import { startTestPlatform, testConfig, type TestPlatform } from './platform-harness.js';
import { until } from './subscription-probe.js';

/** A chat subscription the edge passes through from the membership subgraph. */
export const PASSED_THROUGH = 'subscription($m: ID!, $c: ID!) { messageAdded(asMember: $m, channelId: $c) { text } }';
/** The same, with a fragment: the edge runs its plan on each event (relayed through graphql-ws's loop) instead of passing it through. */
export const RELAYED = 'subscription($m: ID!, $c: ID!) { messageAdded(asMember: $m, channelId: $c) { ...M } } fragment M on ChatMessage { text }';

/**
 * A graphql-transport-ws client written by hand, so that a test can stop reading its TCP socket:
 * `subscriptions` subscriptions to one channel as `member`, each message's text collected, and how
 * the socket closed.
 */
export async function slowSubscriber(graphqlUrl: string, key: string, member: string, channel: string, subscriptions = 1, query = PASSED_THROUGH) {
  const socket = new WebSocket(graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
  const texts: string[] = [];
  const state: { closed?: { code: number; reason: string }; acked: boolean } = { acked: false };
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { type: string; payload?: { data?: { messageAdded?: { text: string } } } };
    if (message.type === 'connection_ack') state.acked = true;
    if (message.type === 'next') texts.push(message.payload!.data!.messageAdded!.text);
  });
  socket.on('close', (code, reason) => (state.closed = { code, reason: String(reason) }));
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
  await until(() => state.acked, 'connection_ack');
  for (let id = 1; id <= subscriptions; id++) {
    socket.send(JSON.stringify({ id: String(id), type: 'subscribe', payload: { query, variables: { m: member, c: channel } } }));
  }
  const tcp = (socket as unknown as { _socket: Socket })._socket;
  return { socket, texts, state, stopReading: () => tcp.pause(), readAgain: () => tcp.resume() };
}

/** A platform for slow-reader tests: its edge's warnings, a live key, and GraphQL over HTTP with that key. */
export interface SlowReaderPlatform {
  platform: TestPlatform;
  key: string;
  /** The edge's warnings: a paused client does not read the close frame, so the edge's own line tells the test it closed. */
  warnings: { msg: string; unsent?: number; instanceUnsent?: number }[];
  /** Runs a query with the key; the test fails on any GraphQL error. */
  gql<T>(query: string, variables?: Record<string, unknown>): Promise<T>;
}

/** The whole platform with these subscription limits, its warnings captured, and a key of `account`. */
export async function startSlowReaderPlatform(subscriptions: Partial<SubscriptionLimits>, account: string): Promise<SlowReaderPlatform> {
  const warnings: SlowReaderPlatform['warnings'] = [];
  const platform = await startTestPlatform(
    { subscriptions: { ...testConfig().subscriptions, ...subscriptions } },
    { level: 'warn', destination: { write: (line: string) => void warnings.push(JSON.parse(line)) } },
  );
  const key = await platform.issueKey(account, 'live');
  const gql = async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
    const response = await platform.request('/graphql', { method: 'POST', key, json: { query, variables } });
    const body = (await response.json()) as { data?: T; errors?: unknown };
    expect(body.errors).toBeUndefined();
    return body.data!;
  };
  return { platform, key, warnings, gql };
}

/** A chat channel `sender` opens with `members`, and a send of a text to it as `sender`. */
export async function chatChannel(gql: SlowReaderPlatform['gql'], sender: string, members: string[], name: string) {
  const { id } = (
    await gql<{ createChatChannel: { id: string } }>('mutation($a: ID!, $m: [ID!], $n: String!) { createChatChannel(asMember: $a, name: $n, memberIds: $m) { id } }', { a: sender, m: members, n: name })
  ).createChatChannel;
  const send = (text: string) => gql('mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: sender, c: id, t: text });
  return { id, send };
}
