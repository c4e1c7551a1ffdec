import { parse, subscribe, type ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import { pushOf } from '../../../subgraphs/shared/push-stream.js';
import { subscribeSharingEvents } from '../../../subgraphs/shared/shared-event-results.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor, run } from '../../support/subgraph-harness.js';
import { receivedBeforeMarker, until } from '../../support/subscription-probe.js';
import { newChannel, newMember, ok, send } from './chat-support.js';

let subgraph: Subgraph;
let testbed: MembershipTestbed;

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph());
});

afterAll(async () => {
  await testbed?.close();
});

const MESSAGE_ADDED = parse(`subscription($asMember: ID!, $channelId: ID, $withMember: ID) {
  messageAdded(asMember: $asMember, channelId: $channelId, withMember: $withMember) {
    id mode text sender { id name } recipient { id } channel { id name }
  }
}`);

interface Added {
  id: string;
  mode: string;
  text: string;
  sender: { id: string; name: string };
  recipient: { id: string } | null;
  channel: { id: string; name: string } | null;
}

/**
 * A live subscription through graphql-js's `subscribe` over the subgraph's own schema (the one
 * @apollo/subgraph built), with the context a websocket connection gets. It listens before
 * `subscribe` resolves (see messageAddedStream), so no readiness probe is needed; it collects
 * events as they come, so tests can wait for some and then, with a marker message sent last,
 * check that nothing more arrives.
 */
async function subscribeAs(principal: Principal, variables: Record<string, unknown>) {
  const result = await subscribe({
    schema: subgraph.schema,
    document: MESSAGE_ADDED,
    variableValues: variables,
    contextValue: subgraph.contextFor(principal),
  });
  if (!(Symbol.asyncIterator in result)) return { error: result as ExecutionResult };
  const iterator = result as AsyncGenerator<ExecutionResult<{ messageAdded: Added }>>;
  const events = collected();
  const pump = (async () => {
    for await (const event of iterator) events.take(event);
    events.end();
  })();
  return {
    ...events.view,
    async stop(): Promise<void> {
      await iterator.return(undefined);
      await pump;
    },
  };
}

/** What a test subscriber collects, however it reads: events' data and errors, whether it ended, and a wait for a count. */
function collected() {
  const received: Added[] = [];
  const errors: unknown[] = [];
  let ended = false;
  return {
    take(event: ExecutionResult<{ messageAdded: Added }>) {
      if (event.errors) errors.push(...event.errors);
      else received.push(JSON.parse(JSON.stringify(event.data!.messageAdded)));
    },
    end: () => void (ended = true),
    fail: (error: unknown) => void errors.push(error),
    view: {
      received,
      errors,
      ended: () => ended,
      /** Waits until `count` events have come (or fails after a while). */
      async waitFor(count: number): Promise<Added[]> {
        const deadline = Date.now() + 5000;
        while (received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        expect(received.length).toBeGreaterThanOrEqual(count);
        return received;
      },
    },
  };
}

/**
 * The same subscription read by pushes, as the subgraph's server reads it for the edge
 * (shared-event-results.ts and push-stream.ts): a sink instead of an iterator.
 */
async function subscribePushed(principal: Principal, variables: Record<string, unknown>) {
  const result = await subscribeSharingEvents({ schema: subgraph.schema, document: MESSAGE_ADDED, variableValues: variables, contextValue: subgraph.contextFor(principal) });
  if (!(Symbol.asyncIterator in result)) throw new Error('subscription refused');
  const push = pushOf<ExecutionResult<{ messageAdded: Added }>>(result);
  if (!push) throw new Error('the chat stream does not push');
  const events = collected();
  push({ next: events.take, end: events.end, fail: events.fail });
  return { ...events.view, stop: () => result.return(undefined) };
}

const textOf = (message: Added) => message.text;

async function account() {
  const principal = principalFor();
  const [a, b, c] = [await newMember(subgraph, principal, 'Ann'), await newMember(subgraph, principal, 'Bob'), await newMember(subgraph, principal, 'Cy')];
  return { principal, a, b, c };
}

describe('messageAdded', () => {
  it("delivers a channel's messages sent after it starts, in order, each once, with fields resolved", async () => {
    const { principal, a, b } = await account();
    const channelId = await newChannel(subgraph, principal, a, 'live', { memberIds: [b] });
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId, text: 'before' });
    const sub = await subscribeAs(principal, { asMember: b, channelId });
    if ('error' in sub) throw new Error(JSON.stringify(sub.error));
    // Sequential sends, then a concurrent burst: every one arrives once, in the channel's order.
    for (let i = 0; i < 5; i++) await send(subgraph, principal, { asMember: i % 2 ? a : b, mode: 'CHANNEL', channelId, text: `s${i}` });
    await Promise.all(Array.from({ length: 10 }, (_, i) => send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId, text: `c${i}` })));
    await sub.waitFor(15);
    const received = await receivedBeforeMarker(sub.received, (text) => send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId, text }), textOf);
    expect(received).toHaveLength(15);
    expect(new Set(received.map((m) => m.id)).size).toBe(15);
    expect(received.slice(0, 5).map((m) => m.text)).toEqual(['s0', 's1', 's2', 's3', 's4']);
    // The order of delivery is the channel's order as stored (newest first there).
    const listed = ok(
      await run<{ chatMessages: { data: { id: string }[] } }>(
        subgraph,
        principal,
        'query($a: ID!, $c: ID) { chatMessages(asMember: $a, channelId: $c, limit: 100) { data { id } } }',
        { a: b, c: channelId },
      ),
    ).chatMessages.data.map((m) => m.id);
    // The marker is the newest message there, and the 16th delivered.
    expect(sub.received.slice(0, 16).map((m) => m.id)).toEqual(listed.slice(0, 16).reverse());
    expect(received[0]).toMatchObject({ mode: 'CHANNEL', sender: { id: b, name: 'Bob' }, channel: { id: channelId, name: 'live' }, recipient: null });
    await sub.stop();
  });

  it("delivers all of the subscriber's messages: its direct ones, its channels', and broadcasts, and nobody else's", async () => {
    const { principal, a, b, c } = await account();
    const mine = await newChannel(subgraph, principal, a, 'mine', { memberIds: [b] });
    const notMine = await newChannel(subgraph, principal, a, 'not-mine');
    const sub = await subscribeAs(principal, { asMember: b });
    if ('error' in sub) throw new Error(JSON.stringify(sub.error));
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'to b' });
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: c, text: 'to c' });
    await send(subgraph, principal, { asMember: b, mode: 'DIRECT', to: c, text: 'from b' });
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: mine, text: 'in mine' });
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: notMine, text: 'in not-mine' });
    await send(subgraph, principal, { asMember: c, mode: 'BROADCAST', text: 'everyone' });
    // Another account's and the test mode's messages never come.
    const other = principalFor();
    const stranger = await newMember(subgraph, other);
    await send(subgraph, other, { asMember: stranger, mode: 'BROADCAST', text: 'elsewhere' });
    const before = await receivedBeforeMarker(sub.received, (text) => send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text }), textOf);
    expect(before.map(textOf)).toEqual(['to b', 'from b', 'in mine', 'everyone']);
    await sub.stop();
  });

  it('follows one direct conversation with withMember', async () => {
    const { principal, a, b, c } = await account();
    const sub = await subscribeAs(principal, { asMember: a, withMember: b });
    if ('error' in sub) throw new Error(JSON.stringify(sub.error));
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: c, text: 'a to c' });
    await send(subgraph, principal, { asMember: b, mode: 'DIRECT', to: a, text: 'b to a' });
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'a to b' });
    await send(subgraph, principal, { asMember: a, mode: 'BROADCAST', text: 'all' });
    const before = await receivedBeforeMarker(sub.received, (text) => send(subgraph, principal, { asMember: b, mode: 'DIRECT', to: a, text }), textOf);
    expect(before.map(textOf)).toEqual(['b to a', 'a to b']);
    await sub.stop();
  });

  it('stops delivering a private channel to a subscriber who left it', async () => {
    const { principal, a, b } = await account();
    const secret = await newChannel(subgraph, principal, a, 'secret', { private: true, memberIds: [b] });
    const onChannel = await subscribeAs(principal, { asMember: b, channelId: secret });
    const onAll = await subscribeAs(principal, { asMember: b });
    if ('error' in onChannel || 'error' in onAll) throw new Error('subscription refused');
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: secret, text: 'while in' });
    await onChannel.waitFor(1);
    await onAll.waitFor(1);
    ok(await run(subgraph, principal, 'mutation($a: ID!, $c: ID!) { leaveChatChannel(asMember: $a, channelId: $c) { id } }', { a: b, c: secret }));
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: secret, text: 'after leaving' });
    await send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text: 'still direct' });
    const toB = (text: string) => send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text });
    expect((await receivedBeforeMarker(onAll.received, toB, textOf)).map(textOf)).toEqual(['while in', 'still direct']);
    // Ann adds Bob back and sends a marker to the channel: it reaches the channel subscription,
    // and "after leaving", sent before it while he was out, must not have come before it.
    ok(await run(subgraph, principal, 'mutation($a: ID!, $c: ID!, $b: ID!) { joinChatChannel(asMember: $a, channelId: $c, memberId: $b) { id } }', { a, c: secret, b }));
    const inSecret = (text: string) => send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: secret, text });
    expect((await receivedBeforeMarker(onChannel.received, inSecret, textOf, { label: 'back in' })).map(textOf)).toEqual(['while in']);
    await onChannel.stop();
    await onAll.stop();
  });

  it("delivers a public channel's messages to a non-member who follows that channel, and not to its all-messages subscription", async () => {
    const { principal, a, b } = await account();
    const lobby = await newChannel(subgraph, principal, a, 'lobby', { private: false });
    const onChannel = await subscribeAs(principal, { asMember: b, channelId: lobby });
    const onAll = await subscribeAs(principal, { asMember: b });
    if ('error' in onChannel || 'error' in onAll) throw new Error('subscription refused');
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: lobby, text: 'to the lobby' });
    expect((await onChannel.waitFor(1)).map(textOf)).toEqual(['to the lobby']);
    const toB = (text: string) => send(subgraph, principal, { asMember: a, mode: 'DIRECT', to: b, text });
    expect((await receivedBeforeMarker(onAll.received, toB, textOf)).map(textOf)).toEqual([]);
    await onChannel.stop();
    await onAll.stop();
  });

  it("ends an archived member's subscriptions at the next event", async () => {
    const { principal, a, b } = await account();
    const channelId = await newChannel(subgraph, principal, a, 'farewell', { memberIds: [b] });
    const sub = await subscribeAs(principal, { asMember: b, channelId });
    if ('error' in sub) throw new Error('subscription refused');
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId, text: 'before' });
    await sub.waitFor(1);
    ok(await run(subgraph, principal, 'mutation($id: ID!) { deleteMember(id: $id) { id } }', { id: b }));
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId, text: 'after archiving' });
    const deadline = Date.now() + 5000;
    while (!sub.ended() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(sub.ended()).toBe(true);
    expect(sub.received.map(textOf)).toEqual(['before']);
  });

  it('sees changes written beside the ORM (plain SQL) at the next event, after earlier events were checked', async () => {
    const { principal, a, b, c } = await account();
    const secret = await newChannel(subgraph, principal, a, 'beside', { private: true, memberIds: [b, c] });
    const onB = await subscribeAs(principal, { asMember: b, channelId: secret });
    const onC = await subscribeAs(principal, { asMember: c, channelId: secret });
    if ('error' in onB || 'error' in onC) throw new Error('subscription refused');
    const toSecret = (text: string) => send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: secret, text });
    const sql = (statement: string, params: unknown[]) => subgraph.orm.em.getConnection().execute(statement, params);
    // Both checked once, so what the checks read of them is kept.
    await toSecret('one');
    await onB.waitFor(1);
    await onC.waitFor(1);
    await sql('delete from "membership"."chat_channel_member" where "channel_id" = ? and "member_id" = ?', [secret, b]);
    await toSecret('two');
    expect((await receivedBeforeMarker(onC.received, toSecret, textOf)).map(textOf)).toEqual(['one', 'two']);
    expect(onB.received.map(textOf)).toEqual(['one']);
    // Back in, by an insert the ORM never saw: the kept "not in the channel" must not hold.
    await sql('insert into "membership"."chat_channel_member" ("id", "channel_id", "member_id", "joined_at") values (gen_random_uuid(), ?, ?, now())', [secret, b]);
    await toSecret('three');
    expect((await onB.waitFor(2)).map(textOf)).toEqual(['one', 'three']);
    await sql('update "membership"."member" set "deleted_at" = now() where "id" = ?', [c]);
    await toSecret('four');
    await until(() => onC.ended(), "the archived member's subscription to end");
    expect(onC.received.map(textOf)).not.toContain('four');
    expect((await onB.waitFor(3)).map(textOf)).toEqual(['one', 'three', 'four']);
    await onB.stop();
  });

  it('checks a subscriber that reads an event late against the state when it reads, not when the event was first checked', async () => {
    const { principal, a, b, c } = await account();
    const secret = await newChannel(subgraph, principal, a, 'late', { private: true, memberIds: [b, c] });
    const onC = await subscribeAs(principal, { asMember: c, channelId: secret });
    if ('error' in onC) throw new Error('subscription refused');
    // Bob's subscription is read by hand: its checks run only when he asks for the next event.
    const late = (await subscribe({ schema: subgraph.schema, document: MESSAGE_ADDED, variableValues: { asMember: b, channelId: secret }, contextValue: subgraph.contextFor(principal) })) as AsyncGenerator<ExecutionResult<{ messageAdded: Added }>>;
    const toSecret = (text: string) => send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId: secret, text });
    await toSecret('one');
    expect((await late.next()).value?.data?.messageAdded.text).toBe('one');
    await onC.waitFor(1);
    // Cy's check of "two" keeps Bob's membership as it was; Bob leaves before he reads "two".
    await toSecret('two');
    await onC.waitFor(2);
    ok(await run(subgraph, principal, 'mutation($a: ID!, $c: ID!) { leaveChatChannel(asMember: $a, channelId: $c) { id } }', { a: b, c: secret }));
    const next = late.next();
    // Time for that check to run (a few statements) before he is back: it must find him out.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    ok(await run(subgraph, principal, 'mutation($a: ID!, $c: ID!, $b: ID!) { joinChatChannel(asMember: $a, channelId: $c, memberId: $b) { id } }', { a, c: secret, b }));
    await toSecret('back');
    expect((await next).value?.data?.messageAdded.text).toBe('back');
    await late.return(undefined);
    await onC.stop();
  });

  it('refuses to start for an unknown acting member or a private channel of others', async () => {
    const { principal, a, c } = await account();
    const secret = await newChannel(subgraph, principal, a, 'secret', { private: true });
    const unknown = await subscribeAs(principal, { asMember: '00000000-0000-4000-8000-ffffffffffff' });
    expect('error' in unknown && unknown.error?.errors?.[0].extensions).toMatchObject({ reason: 'unknown_member' });
    const hidden = await subscribeAs(principal, { asMember: c, channelId: secret });
    expect('error' in hidden && hidden.error?.errors?.[0].extensions).toMatchObject({ reason: 'channel_not_found' });
  });

  it('pushed: every message in order, each with its fields read fresh, the end for an archived member, nothing after return()', async () => {
    const { principal, a, b } = await account();
    const channelId = await newChannel(subgraph, principal, a, 'pushed', { memberIds: [b] });
    const sub = await subscribePushed(principal, { asMember: b, channelId });
    const other = await subscribePushed(principal, { asMember: a, channelId });
    // A burst: each subscriber's checks and executions overlap across the messages.
    await Promise.all(['one', 'two', 'three', 'four'].map((text) => send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId, text })));
    expect((await sub.waitFor(4)).map(textOf).sort()).toEqual(['four', 'one', 'three', 'two']);
    // In the channel's order as stored (newest first there).
    const listed = ok(
      await run<{ chatMessages: { data: { text: string }[] } }>(subgraph, principal, 'query($a: ID!, $c: ID) { chatMessages(asMember: $a, channelId: $c, limit: 100) { data { text } } }', {
        a: b,
        c: channelId,
      }),
    ).chatMessages.data.map((m) => m.text);
    expect(sub.received.map(textOf)).toEqual(listed.reverse());
    // The sender renamed between two messages: the second one's execution starts from a fresh context.
    ok(await run(subgraph, principal, 'mutation($id: ID!, $n: String) { updateMember(id: $id, name: $n) { id } }', { id: a, n: 'Ann Renamed' }));
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId, text: 'renamed' });
    const [, , , , renamed] = await sub.waitFor(5);
    expect(renamed).toMatchObject({ text: 'renamed', sender: { id: a, name: 'Ann Renamed' } });
    await other.stop();
    ok(await run(subgraph, principal, 'mutation($id: ID!) { deleteMember(id: $id) { id } }', { id: b }));
    await send(subgraph, principal, { asMember: a, mode: 'CHANNEL', channelId, text: 'after archiving' });
    const deadline = Date.now() + 5000;
    while (!sub.ended() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(sub.ended()).toBe(true);
    expect(sub.received.map(textOf)).not.toContain('after archiving');
    // The stopped one heard nothing after its return().
    expect(other.received.map(textOf)).not.toContain('after archiving');
    expect(sub.errors).toEqual([]);
  });

  it('ends at once when the client unsubscribes, with no event pending', async () => {
    const { principal, a } = await account();
    const sub = await subscribeAs(principal, { asMember: a });
    if ('error' in sub) throw new Error('subscription refused');
    const stopped = await Promise.race([sub.stop().then(() => 'stopped'), new Promise((r) => setTimeout(() => r('hung'), 2000))]);
    expect(stopped).toBe('stopped');
    expect(sub.ended()).toBe(true);
  });
});
