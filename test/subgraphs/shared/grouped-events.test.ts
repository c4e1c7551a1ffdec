import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { GROUPED_EVENTS_PARAM, NEXT_MANY } from '../../../core/grouped-events.js';
import { PRINCIPAL_HEADER, signPrincipal, type Principal } from '../../../core/principal.js';
import type { RunningService } from '../../../core/listen.js';
import { serveSubgraph } from '../../../subgraphs/shared/server.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';
import { deliverGrouped } from '../../../subgraphs/shared/grouped-delivery.js';
import { probeUntil, until } from '../../support/subscription-probe.js';
import { newChannel, newMember, send } from '../membership/chat-support.js';

/**
 * The subgraph's side of grouped event frames (core/grouped-events.ts), read off the wire: a raw
 * graphql-transport-ws client, so every frame the subgraph writes is seen as it is.
 */
let testbed: MembershipTestbed;
let subgraph: Subgraph;
let served: RunningService;

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph());
  served = await serveSubgraph(subgraph, { port: 0, logger: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await served?.stop();
  await testbed?.close();
});

interface Frame {
  type: string;
  id?: string;
  ids?: string[];
  payload?: { data?: { messageAdded?: { text: string } | null } | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

/** A connection to the subgraph as the edge opens one, with or without asking for grouped frames. */
async function connect(principal: Principal, grouped: boolean) {
  const socket = new WebSocket(served.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
  const frames: Frame[] = [];
  socket.on('message', (data) => frames.push(JSON.parse(String(data)) as Frame));
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const params: Record<string, unknown> = { [PRINCIPAL_HEADER]: signPrincipal(principal, TEST_SECRET) };
  if (grouped) params[GROUPED_EVENTS_PARAM] = true;
  socket.send(JSON.stringify({ type: 'connection_init', payload: params }));
  await until(() => frames.some((frame) => frame.type === 'connection_ack'), 'the connection to be acknowledged');
  return {
    frames,
    subscribe(id: string, me: string, channel: string, fields = 'text') {
      const query = `subscription($me: ID!, $c: ID!) { messageAdded(asMember: $me, channelId: $c) { ${fields} } }`;
      // The edge's request id for the operation, as it sends it.
      socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables: { me, c: channel }, extensions: { requestId: `ws_test:${id}` } } }));
    },
    complete(id: string) {
      socket.send(JSON.stringify({ id, type: 'complete' }));
    },
    /** A ping's pong: the server has handled every frame sent before it. */
    async settled() {
      const pongs = frames.filter((frame) => frame.type === 'pong').length;
      socket.send(JSON.stringify({ type: 'ping' }));
      await until(() => frames.filter((frame) => frame.type === 'pong').length > pongs, 'a pong');
    },
    close: () => socket.close(),
  };
}

/** Which subscriptions received the message with this text, and in how many frames. */
function receipts(frames: readonly Frame[], text: string) {
  const carrying = frames.filter((frame) => frame.payload?.data?.messageAdded?.text === text);
  return { frames: carrying, ids: carrying.flatMap((frame) => frame.ids ?? (frame.id ? [frame.id] : [])).sort() };
}

async function channelWith(principal: Principal, count: number) {
  const sender = await newMember(subgraph, principal, 'Sender');
  const members: string[] = [];
  for (let i = 0; i < count; i++) members.push(await newMember(subgraph, principal));
  const channel = await newChannel(subgraph, principal, sender, `grouped-${count}-${principal.accountId}`, { private: true, memberIds: members });
  const say = (text: string) => send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text });
  return { sender, members, channel, say };
}

/** Probes until every listed subscription has received a probe: all of them are listening. */
async function allListening(frames: readonly Frame[], ids: string[], say: (text: string) => Promise<unknown>) {
  const seen = new Set<string>();
  await probeUntil(
    () => {
      for (const frame of frames) for (const id of frame.ids ?? (frame.id ? [frame.id] : [])) if (frame.payload?.data?.messageAdded?.text?.startsWith('probe') || frame.payload?.errors) seen.add(id);
      return ids.every((id) => seen.has(id));
    },
    (attempt) => say(`probe ${attempt}`),
    'every subscription to listen',
  );
}

describe('grouped event frames', () => {
  it('carry one event to every subscription of the connection that receives it alike, in one frame', async () => {
    const principal = principalFor();
    const { members, channel, say } = await channelWith(principal, 3);
    const edge = await connect(principal, true);
    try {
      members.forEach((me, i) => edge.subscribe(`s${i}`, me, channel));
      await allListening(edge.frames, ['s0', 's1', 's2'], say);
      await say('together');
      await until(() => receipts(edge.frames, 'together').ids.length === 3, 'the message at all three');
      const { frames, ids } = receipts(edge.frames, 'together');
      expect(ids).toEqual(['s0', 's1', 's2']);
      expect(frames).toHaveLength(1);
      expect(frames[0]).toEqual({ type: NEXT_MANY, ids: expect.any(Array), payload: { data: { messageAdded: { text: 'together' } } } });
      expect(edge.frames.some((frame) => frame.type === 'next'), 'no per-subscription next frame on a grouped connection').toBe(false);
    } finally {
      edge.close();
    }
  });

  it('are sent only to a client that asked: any other graphql-ws client gets one next frame per subscription', async () => {
    const principal = principalFor();
    const { members, channel, say } = await channelWith(principal, 2);
    const plain = await connect(principal, false);
    try {
      members.forEach((me, i) => plain.subscribe(`p${i}`, me, channel));
      await allListening(plain.frames, ['p0', 'p1'], say);
      await say('apart');
      await until(() => receipts(plain.frames, 'apart').ids.length === 2, 'the message at both');
      const { frames, ids } = receipts(plain.frames, 'apart');
      expect(ids).toEqual(['p0', 'p1']);
      expect(frames.map((frame) => frame.type)).toEqual(['next', 'next']);
      expect(plain.frames.some((frame) => frame.type === NEXT_MANY)).toBe(false);
    } finally {
      plain.close();
    }
  });

  it('stop listing a subscription once it is completed, and complete it after every frame it was sent', async () => {
    const principal = principalFor();
    const { members, channel, say } = await channelWith(principal, 2);
    const edge = await connect(principal, true);
    try {
      members.forEach((me, i) => edge.subscribe(`c${i}`, me, channel));
      await allListening(edge.frames, ['c0', 'c1'], say);
      edge.complete('c0');
      await edge.settled();
      // A marker after the completion: once c1 has it, anything for c0 sent before it is in.
      await probeUntil(
        () => receipts(edge.frames, 'after').ids.includes('c1'),
        () => say('after'),
        'the message after the completion',
      );
      expect(receipts(edge.frames, 'after').ids).toEqual(['c1']);
    } finally {
      edge.close();
    }
  });

  it("end with graphql-ws's complete after the subscription's last grouped frame when the subgraph ends it", async () => {
    const principal = principalFor();
    const { members, channel, say } = await channelWith(principal, 1);
    const edge = await connect(principal, true);
    try {
      edge.subscribe('a0', members[0], channel);
      await allListening(edge.frames, ['a0'], say);
      // Archiving the subscriber ends its subscription (messageAddedStream's checks), on the next message.
      await subgraph.orm.em.fork().getConnection().execute(`update "membership"."member" set "deleted_at" = now() where "id" = '${members[0]}'`);
      await say('after archiving');
      await until(() => edge.frames.some((frame) => frame.type === 'complete' && frame.id === 'a0'), 'the subscription to complete');
      const last = edge.frames.findLastIndex((frame) => frame.ids?.includes('a0'));
      expect(edge.frames.findIndex((frame) => frame.type === 'complete' && frame.id === 'a0')).toBeGreaterThan(last);
      expect(receipts(edge.frames, 'after archiving').ids).toEqual([]);
    } finally {
      edge.close();
    }
  });

  it("send a result with errors to each subscription apart, masked under that subscription's own request id", async () => {
    const principal = principalFor();
    const { sender, members, channel } = await channelWith(principal, 2);
    const edge = await connect(principal, true);
    const db = new pg.Client({ connectionString: testbed.db.url });
    await db.connect();
    // Each event's revisions are read from a column that is gone: an internal error, shared by
    // both subscriptions' one execution of the event.
    await db.query('alter table "membership"."chat_message_revision" rename column "message_id" to "message_id_gone"');
    try {
      members.forEach((me, i) => edge.subscribe(`e${i}`, me, channel, 'text revisions { text }'));
      // The send answers with its id only: its own revisions would fail too.
      const sendOnly = async (text: string) => {
        const result = await run(subgraph, principal, 'mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: sender, c: channel, t: text });
        expect(result.errors).toBeUndefined();
      };
      await allListening(edge.frames, ['e0', 'e1'], sendOnly);
      const failing = edge.frames.filter((frame) => frame.type === NEXT_MANY && frame.payload?.errors);
      const ids = failing.flatMap((frame) => frame.ids!);
      expect(ids).toContain('e0');
      expect(ids).toContain('e1');
      for (const frame of failing) {
        expect(frame.ids, 'a result with errors is a group of one').toHaveLength(1);
        const requestId = `ws_test:${frame.ids![0]}`;
        expect(frame.payload!.errors![0]).toMatchObject({ message: `Internal server error (request ${requestId})`, extensions: { code: 'INTERNAL_SERVER_ERROR', requestId } });
        expect(JSON.stringify(frame)).not.toContain('message_id');
      }
    } finally {
      await db.query('alter table "membership"."chat_message_revision" rename column "message_id_gone" to "message_id"');
      await db.end();
      edge.close();
    }
  });

  it("keep each subscription's events in order when an event shared with others follows one of its own in the same tick", async () => {
    const sent: string[] = [];
    const socket = { readyState: 1, OPEN: 1, send: (frame: string) => sent.push(frame) } as unknown as WebSocket;
    /** A stream that has these results ready, then stays open. */
    const ready = (...results: { data: { n: number } }[]) => {
      let next = 0;
      return {
        next: () => (next < results.length ? Promise.resolve({ done: false as const, value: results[next++] }) : new Promise<never>(() => {})),
        return: () => Promise.resolve({ done: true as const, value: undefined }),
      };
    };
    const [first, shared] = [{ data: { n: 1 } }, { data: { n: 2 } }];
    // B receives only the shared event; A its own first, then the shared one, all in one tick.
    const b = deliverGrouped(ready(shared), socket, 'B', (result) => result);
    const a = deliverGrouped(ready(first, shared), socket, 'A', (result) => result);
    await new Promise((resolve) => setImmediate(resolve));
    const order = (id: string) => sent.map((frame) => JSON.parse(frame) as { ids: string[]; payload: { data: { n: number } } }).filter((frame) => frame.ids.includes(id)).map((frame) => frame.payload.data.n);
    expect(order('A')).toEqual([1, 2]);
    expect(order('B')).toEqual([2]);
    await Promise.all([a.return(), b.return()]);
  });
});
