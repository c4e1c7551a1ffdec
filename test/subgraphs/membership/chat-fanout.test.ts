import { parse, subscribe } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
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

it("checks one message for all of a channel's subscribers in a few statements, not a few per subscriber", async () => {
  const principal = principalFor();
  const sender = await newMember(subgraph, principal, 'Sender');
  const subscribers: string[] = [];
  for (let i = 0; i < 40; i++) subscribers.push(await newMember(subgraph, principal));
  const channel = await newChannel(subgraph, principal, sender, 'fanout', { private: true, memberIds: subscribers });
  const document = parse('subscription($me: ID!, $c: ID!) { messageAdded(asMember: $me, channelId: $c) { text } }');
  const received: string[] = [];
  const iterators: AsyncGenerator[] = [];
  for (const me of subscribers) {
    const iterator = (await subscribe({ schema: subgraph.schema, document, variableValues: { me, c: channel }, contextValue: subgraph.contextFor(principal) })) as AsyncGenerator<any>;
    iterators.push(iterator);
    void (async () => {
      for await (const event of iterator) received.push(event.data.messageAdded.text);
    })();
  }
  const arrived = (text: string) => received.filter((t) => t === text).length;
  // A first message warms up every subscriber; its checks must be over before counting starts,
  // or they would be counted against the second.
  await send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text: 'hello' });
  await until(() => arrived('hello') === subscribers.length, "'hello' at every subscriber");
  statements.length = 0;
  await send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text: 'counted' });
  await until(() => arrived('counted') === subscribers.length, "'counted' at every subscriber");
  expect(received.filter((t) => t === 'counted')).toHaveLength(subscribers.length);
  const reads = statements.filter((sql) => /^\S*\s*\S*select/i.test(sql.replace(/\x1b\[[0-9;]*m/g, '').replace('[query] ', '')));
  // The send itself takes a handful; the 40 subscribers' checks must not add ~3 statements each.
  expect(reads.length).toBeLessThan(15);
  for (const iterator of iterators) await iterator.return(undefined);
});
