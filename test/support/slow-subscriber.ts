import type { Socket } from 'node:net';
import WebSocket from 'ws';
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
