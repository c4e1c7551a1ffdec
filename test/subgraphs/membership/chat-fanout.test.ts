import { parse, subscribe, type ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribeSharingEvents } from '../../../subgraphs/shared/shared-event-results.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor } from '../../support/subgraph-harness.js';
import { until } from '../../support/subscription-probe.js';
import { newChannel, newMember, send } from './chat-support.js';

let subgraph: Subgraph;
let testbed: MembershipTestbed;
const statements: string[] = [];

beforeAll(async () => {
  ({ subgraph } = testbed = await startMembershipSubgraph({ onQuery: (sql) => statements.push(sql) }));
});
afterAll(async () => {
  await testbed?.close();
});

/** A logged statement without the logger's colours. */
const plain = (sql: string) => sql.replace(/\x1b\[[0-9;]*m/g, '');

/**
 * A new account's private channel of `count` new members, each subscribed to it through
 * graphql-js's `subscribe` and collecting the texts it receives; `say` sends to the channel.
 */
async function subscribedChannel(name: string, count: number) {
  const principal = principalFor();
  const sender = await newMember(subgraph, principal, `${name} sender`);
  const subscribers: string[] = [];
  for (let i = 0; i < count; i++) subscribers.push(await newMember(subgraph, principal));
  const channel = await newChannel(subgraph, principal, sender, name, { private: true, memberIds: subscribers });
  const document = parse('subscription($me: ID!, $c: ID!) { messageAdded(asMember: $me, channelId: $c) { text } }');
  const received = new Map<string, string[]>(subscribers.map((me) => [me, []]));
  const iterators: AsyncGenerator[] = [];
  for (const me of subscribers) {
    const iterator = (await subscribe({ schema: subgraph.schema, document, variableValues: { me, c: channel }, contextValue: subgraph.contextFor(principal) })) as AsyncGenerator<any>;
    iterators.push(iterator);
    void (async () => {
      for await (const event of iterator) received.get(me)!.push(event.data.messageAdded.text);
    })();
  }
  return {
    channel,
    subscribers,
    received,
    say: (text: string) => send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text }),
    close: async () => {
      for (const iterator of iterators) await iterator.return(undefined);
    },
  };
}

it("checks one message for all of a channel's subscribers in a few statements, not a few per subscriber", async () => {
  const { subscribers, received, say, close } = await subscribedChannel('fanout', 40);
  const all = () => [...received.values()].flat();
  const arrived = (text: string) => all().filter((t) => t === text).length;
  // A first message warms up every subscriber; its checks must be over before counting starts,
  // or they would be counted against the second.
  await say('hello');
  await until(() => arrived('hello') === subscribers.length, "'hello' at every subscriber");
  statements.length = 0;
  await say('counted');
  await until(() => arrived('counted') === subscribers.length, "'counted' at every subscriber");
  expect(all().filter((t) => t === 'counted')).toHaveLength(subscribers.length);
  const reads = statements.filter((sql) => /^\S*\s*\S*select/i.test(plain(sql).replace('[query] ', '')));
  // The send itself takes a handful; the 40 subscribers' checks must not add ~3 statements each.
  expect(reads.length).toBeLessThan(15);
  await close();
});

it("reads one counter per message, not the subscribers' states, until a membership changes", async () => {
  const { channel, subscribers, received, say, close } = await subscribedChannel('counter', 10);
  const checkReads = () => {
    const all = statements.map(plain);
    return {
      counter: all.filter((sql) => /select "version" from "membership"."chat_access_version"/.test(sql)).length,
      members: all.filter((sql) => /left join "membership"."member"/.test(sql)).length,
      memberships: all.filter((sql) => /left join "membership"."chat_channel_member"/.test(sql)).length,
    };
  };
  const deliver = async (text: string, to: string[]) => {
    statements.length = 0;
    await say(text);
    await until(() => to.every((me) => received.get(me)!.includes(text)), `'${text}' at its subscribers`);
    return checkReads();
  };
  // The first message reads every subscriber's state; the second finds it kept, and current.
  expect(await deliver('first', subscribers)).toMatchObject({ members: 1, memberships: 1 });
  expect(await deliver('second', subscribers)).toEqual({ counter: 1, members: 0, memberships: 0 });
  // Channels and members changing in another account leave this one's kept states alone.
  const elsewhere = principalFor();
  const stranger = await newMember(subgraph, elsewhere, 'Elsewhere');
  await newChannel(subgraph, elsewhere, stranger, 'elsewhere', { private: true, memberIds: [await newMember(subgraph, elsewhere)] });
  expect(await deliver('still kept', subscribers)).toEqual({ counter: 1, members: 0, memberships: 0 });
  // One leaves: the counter moved, so the next message reads them all again, and not to the leaver.
  const [leaver, ...staying] = subscribers;
  const left = await subgraph.orm.em.getConnection().execute('delete from "membership"."chat_channel_member" where "channel_id" = ? and "member_id" = ?', [channel, leaver], 'run');
  expect(left).toMatchObject({ affectedRows: 1 });
  expect(await deliver('third', staying)).toMatchObject({ members: 1, memberships: 1 });
  expect(await deliver('fourth', staying)).toEqual({ counter: 1, members: 0, memberships: 0 });
  expect(received.get(leaver)).toEqual(['first', 'second', 'still kept']);
  await close();
});

describe('one execution of an event for the subscribers it cannot differ for', () => {
  const SELECT = 'subscription($me: ID!, $c: ID!, $full: Boolean!) { messageAdded(asMember: $me, channelId: $c) { text sender @include(if: $full) { id name } } }';

  async function subscribeAll(channel: string, members: string[], full: (i: number) => boolean, principal = principalFor()) {
    const document = parse(SELECT);
    const received: Record<string, unknown>[][] = members.map(() => []);
    const iterators: AsyncIterableIterator<ExecutionResult>[] = [];
    for (const [i, me] of members.entries()) {
      const iterator = (await subscribeSharingEvents({
        schema: subgraph.schema,
        document,
        variableValues: { me, c: channel, full: full(i) },
        contextValue: subgraph.contextFor(principal),
      })) as AsyncIterableIterator<ExecutionResult>;
      iterators.push(iterator);
      void (async () => {
        for await (const event of iterator) received[i].push(event.data!.messageAdded as Record<string, unknown>);
      })();
    }
    return { received, close: () => Promise.all(iterators.map((iterator) => iterator.return?.())) };
  }

  it('resolves the fields below the root once per event, not once per subscriber', async () => {
    const principal = principalFor();
    const sender = await newMember(subgraph, principal, 'Shared Sender');
    const members: string[] = [];
    for (let i = 0; i < 30; i++) members.push(await newMember(subgraph, principal));
    const channel = await newChannel(subgraph, principal, sender, 'shared', { private: true, memberIds: members });
    const { received, close } = await subscribeAll(channel, members, () => true, principal);
    await send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text: 'warm' });
    await until(() => received.every((events) => events.length === 1), 'the first message at every subscriber');
    statements.length = 0;
    await send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text: 'shared' });
    await until(() => received.every((events) => events.length === 2), 'the second message at every subscriber');
    for (const events of received) expect(events[1]).toEqual({ text: 'shared', sender: { id: sender, name: 'Shared Sender' } });
    // Each subscriber resolving `sender` itself would read the member 30 times.
    const senderReads = statements.filter((sql) => /from "membership"\."member" as "m0" where "m0"\."id" in/.test(sql));
    expect(senderReads.length).toBeLessThanOrEqual(2);
    await close();
  });

  it('answers each subscriber in the shape its own variables ask for', async () => {
    const principal = principalFor();
    const sender = await newMember(subgraph, principal, 'Shape Sender');
    const members = [await newMember(subgraph, principal), await newMember(subgraph, principal), await newMember(subgraph, principal)];
    const channel = await newChannel(subgraph, principal, sender, 'shapes', { private: true, memberIds: members });
    const { received, close } = await subscribeAll(channel, members, (i) => i !== 1, principal);
    await send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text: 'shaped' });
    await until(() => received.every((events) => events.length === 1), 'the message at every subscriber');
    expect(received[0][0]).toEqual({ text: 'shaped', sender: { id: sender, name: 'Shape Sender' } });
    expect(received[1][0]).toEqual({ text: 'shaped' });
    expect(received[2][0]).toEqual({ text: 'shaped', sender: { id: sender, name: 'Shape Sender' } });
    await close();
  });

  it('still checks each subscriber: a member outside a private channel receives nothing from it', async () => {
    const principal = principalFor();
    const sender = await newMember(subgraph, principal, 'Gate Sender');
    const inside = await newMember(subgraph, principal);
    const outside = await newMember(subgraph, principal);
    const channel = await newChannel(subgraph, principal, sender, 'gated', { private: true, memberIds: [inside] });
    const first = await subscribeAll(channel, [inside], () => true, principal);
    // The outsider cannot subscribe to the private channel at all.
    const refused = (await subscribeSharingEvents({
      schema: subgraph.schema,
      document: parse(SELECT),
      variableValues: { me: outside, c: channel, full: true },
      contextValue: subgraph.contextFor(principal),
    })) as ExecutionResult;
    expect(refused.errors?.[0]?.extensions?.code).toBeDefined();
    await send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text: 'inside only' });
    await until(() => first.received[0].length === 1, 'the message inside');
    expect(first.received[0][0]).toMatchObject({ text: 'inside only' });
    await first.close();
  });
});
