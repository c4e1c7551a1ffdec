import { parse, subscribe } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor } from '../../support/subgraph-harness.js';
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
  await send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text: 'hello' });
  statements.length = 0;
  await send(subgraph, principal, { asMember: sender, mode: 'CHANNEL', channelId: channel, text: 'counted' });
  const deadline = Date.now() + 5000;
  while (received.filter((t) => t === 'counted').length < subscribers.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(received.filter((t) => t === 'counted')).toHaveLength(subscribers.length);
  const reads = statements.filter((sql) => /^\S*\s*\S*select/i.test(sql.replace(/\x1b\[[0-9;]*m/g, '').replace('[query] ', '')));
  // The send itself takes a handful; the 40 subscribers' checks must not add ~3 statements each.
  expect(reads.length).toBeLessThan(15);
  for (const iterator of iterators) await iterator.return(undefined);
});
