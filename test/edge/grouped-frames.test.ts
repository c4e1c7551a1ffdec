import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { nextManyFrame } from '../../core/grouped-events.js';
import { generateId, groupedListeners, GroupedEventsWebSocket } from '../../edge/interfaces/graphql/subscriptions/grouped-frames.js';
import { upstreamStream } from '../../edge/interfaces/graphql/subscriptions/upstream-stream.js';
import { until } from '../support/subscription-probe.js';

/**
 * The edge's reading of grouped frames (edge/interfaces/graphql/subscriptions/grouped-frames.ts) against a
 * loopback server that speaks graphql-transport-ws by hand, as a subgraph does, so the frames it
 * writes are exactly the test's.
 */
const servers: WebSocketServer[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.dispose();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

/** A server that acknowledges, records subscribe frames by id, and lets the test write frames. */
async function upstream() {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const subscribed: string[] = [];
  let socket: WebSocket | undefined;
  server.on('connection', (connection) => {
    socket = connection;
    connection.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; id?: string; payload?: Record<string, unknown> };
      if (message.type === 'connection_init') connection.send(JSON.stringify({ type: 'connection_ack' }));
      if (message.type === 'subscribe') subscribed.push(message.id!);
    });
  });
  const client = createClient({
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    webSocketImpl: GroupedEventsWebSocket,
    generateID: generateId,
    lazy: true,
    retryAttempts: 0,
  });
  clients.push(client);
  return { client, subscribed, write: (frame: string) => socket!.send(frame) };
}

const payload = () => ({ query: 'subscription { tick }' });

describe("the edge's upstream sockets", () => {
  it('hand one grouped frame to every subscription it lists, and graphql-ws frames to graphql-ws', async () => {
    const server = await upstream();
    const streams = [upstreamStream(server.client, payload()), upstreamStream(server.client, payload()), upstreamStream(server.client, payload())];
    const received: unknown[][] = streams.map(() => []);
    streams.forEach((stream, i) => void (async () => {
      for await (const event of stream) received[i].push(event);
    })());
    await until(() => server.subscribed.length === 3, 'three subscriptions upstream');
    const [a, b, c] = server.subscribed;
    server.write(nextManyFrame([a, c, 'unknown-id'], { data: { tick: 1 } }));
    server.write(JSON.stringify({ id: b, type: 'next', payload: { data: { tick: 2 } } }));
    await until(() => received[0].length === 1 && received[1].length === 1 && received[2].length === 1, 'an event at each');
    expect(received).toEqual([[{ data: { tick: 1 } }], [{ data: { tick: 2 } }], [{ data: { tick: 1 } }]]);
    // One parse for the group: the listed subscriptions hold the same object.
    expect(received[0][0]).toBe(received[2][0]);
    await Promise.all(streams.map((stream) => stream.return()));
  });

  it('stop handing grouped frames to a subscription once it has ended', async () => {
    const server = await upstream();
    const [kept, ended] = [upstreamStream(server.client, payload()), upstreamStream(server.client, payload())];
    const received: unknown[] = [];
    void (async () => {
      for await (const event of kept) received.push(event);
    })();
    await until(() => server.subscribed.length === 2, 'two subscriptions upstream');
    const listening = groupedListeners();
    await ended.return();
    expect(groupedListeners(), "the ended subscription's listener is gone").toBe(listening - 1);
    server.write(nextManyFrame(server.subscribed, { data: { tick: 3 } }));
    await until(() => received.length === 1, 'the event at the kept subscription');
    expect(await ended.next()).toEqual({ done: true, value: undefined });
    await kept.return();
    expect(groupedListeners()).toBe(listening - 2);
  });

  it('hand a grouped frame only to subscriptions of the connection it came on', async () => {
    const [mine, other] = [await upstream(), await upstream()];
    const stream = upstreamStream(mine.client, payload());
    const received: unknown[] = [];
    void (async () => {
      for await (const event of stream) received.push(event);
    })();
    const bystander = upstreamStream(other.client, payload());
    await until(() => mine.subscribed.length === 1 && other.subscribed.length === 1, 'a subscription on each connection');
    // Another connection's subgraph names this subscription: nothing reaches it.
    other.write(nextManyFrame([mine.subscribed[0]!], { data: { tick: 'forged' } }));
    mine.write(nextManyFrame([mine.subscribed[0]!], { data: { tick: 'own' } }));
    await until(() => received.length === 1, 'the event of its own connection');
    // Frames on one connection arrive in order, and the other's was written first: give it time anyway.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(received).toEqual([{ data: { tick: 'own' } }]);
    await Promise.all([stream.return(), bystander.return()]);
  });

  it('close the connection with 4400 on a grouped frame they cannot read, ending its subscriptions', async () => {
    const server = await upstream();
    const stream = upstreamStream(server.client, payload());
    const outcome = stream.next().then(
      () => 'settled',
      (error: { code?: number }) => error.code,
    );
    await until(() => server.subscribed.length === 1, 'the subscription upstream');
    server.write('{"type":"next_many","ids":"not a list","payload":{}}');
    expect(await outcome).toBe(4400);
  });
});
