import { parse } from 'graphql';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { SubscriptionExecutor } from '../../edge/interfaces/graphql/subscriptions/subscription-executor.js';
import { readSupergraph } from '../../schema/supergraph.js';

const executor = new SubscriptionExecutor(readSupergraph(), {}, pino({ level: 'silent' }));
const plan = (query: string, operationName?: string) => executor.plan(parse(query), operationName);
const context = { requestId: 'req_test' } as never;

describe('subscription events the owning subgraph answers as asked', () => {
  it('pass through when the fetch selects exactly what the client selects, aliases and nested fields included', async () => {
    const planned = plan('subscription($me: ID!, $c: ID!) { m: messageAdded(asMember: $me, channelId: $c) { id t: text sender { name } } }');
    expect(planned.passthrough).toBe(true);
    const event = { data: { m: { id: '1', t: 'hi', sender: { name: 'Ada' } } } };
    expect(await planned.resolveEvent(event, context, {})).toEqual({ data: event.data });
  });

  it('run the plan when another subgraph owns a field, when fragments need expanding, or when the event has errors', async () => {
    expect(plan('subscription($me: ID!) { messageAdded(asMember: $me) { text sender { name jobPostings { id } } } }').passthrough).toBe(false);
    expect(plan('subscription($me: ID!) { messageAdded(asMember: $me) { ...M } } fragment M on ChatMessage { text }').passthrough).toBe(false);
    expect(plan('subscription($me: ID!) { messageAdded(asMember: $me) { ... on ChatMessage { text } } }').passthrough).toBe(false);
    // With errors beside the data, the gateway's own path formats them (paths, codes), as for any fetch.
    const planned = plan('subscription($me: ID!) { messageAdded(asMember: $me) { text } }');
    expect(planned.passthrough).toBe(true);
    const withErrors = await planned.resolveEvent({ data: { messageAdded: { text: 'x' } }, errors: [{ message: 'partial' } as never] }, context, {});
    expect(withErrors.data).toEqual({ messageAdded: { text: 'x' } });
    expect(withErrors.errors?.length).toBeGreaterThan(0);
  });

  it('choose the named operation of a document with several', () => {
    const document = 'subscription A($me: ID!) { messageAdded(asMember: $me) { text } } subscription B($me: ID!) { messageAdded(asMember: $me) { text sender { jobPostings { id } } } }';
    expect(plan(document, 'A').passthrough).toBe(true);
    expect(plan(document, 'B').passthrough).toBe(false);
  });
});
