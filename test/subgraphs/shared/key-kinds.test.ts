import { GraphQLInt, GraphQLObjectType, GraphQLSchema, parse, subscribe, type ExecutionResult } from 'graphql';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInferenceSubgraph } from '../../../subgraphs/inference/index.js';
import { enforceKeyKinds } from '../../../subgraphs/shared/key-kinds.js';
import { PRINCIPAL_HEADER, signPrincipal } from '../../../core/principal.js';
import type { RunningService } from '../../../core/listen.js';
import { serveSubgraph } from '../../../subgraphs/shared/server.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let subgraph: Subgraph;

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createInferenceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET });
});

afterAll(async () => {
  await subgraph?.close();
  await db?.drop();
});

const ENTITIES = `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Provider { id } } }`;

describe('a subgraph refuses the key kinds it does not serve, whatever the edge let through', () => {
  it('refuses a root field to a live key with FORBIDDEN naming the kinds it serves', async () => {
    const result = await run(subgraph, principalFor(undefined, 'live'), '{ providers { id } }');
    expect(result.data).toBeNull();
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
    expect(result.errors?.[0].message).toBe('The inference API serves text, image, admin keys only; a live key has no access to it');
  });

  it("resolves the gateway's entity lookups for any authenticated kind: the root field that led there was checked by its own subgraph", async () => {
    for (const kind of ['live', 'test', 'traceroute', 'text'] as const) {
      const result = await run(subgraph, principalFor(undefined, kind), ENTITIES, { representations: [{ __typename: 'Provider', id: 'provider_a' }] });
      expect(result.errors, kind).toBeUndefined();
      expect(result.data!._entities, kind).toEqual([{ id: 'provider_a' }]);
    }
  });

  it('refuses its plain HTTP routes to a kind it does not serve with 403', async () => {
    const withRoute: Subgraph = { ...subgraph, httpRoutes: (_req, res) => void res.json({ reached: true }) };
    const served: RunningService = await serveSubgraph(withRoute, { port: 0, logger: pino({ level: 'silent' }) });
    try {
      const call = (kind: 'live' | 'text') =>
        fetch(served.url.replace(/\/graphql$/, '/export'), { headers: { [PRINCIPAL_HEADER]: signPrincipal(principalFor(undefined, kind), TEST_SECRET) } });
      const refused = await call('live');
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { errors: { extensions: unknown }[] }).errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
      const reached = await call('text');
      expect(reached.status).toBe(200);
      expect(await reached.json()).toEqual({ reached: true });
    } finally {
      await served.stop();
    }
  });
});

describe('subscriptions', () => {
  /** A Subscription field `ticks` that yields one event per call of `emit`. */
  function tickSchema() {
    const queue: number[] = [];
    let wake: (() => void) | undefined;
    const schema = new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt, resolve: () => 1 } } }),
      subscription: new GraphQLObjectType({
        name: 'Subscription',
        fields: {
          ticks: {
            type: GraphQLInt,
            subscribe: async function* () {
              for (;;) {
                while (!queue.length) await new Promise<void>((resolve) => (wake = resolve));
                yield queue.shift();
              }
            },
            resolve: (tick: number) => tick,
          },
        },
      }),
    });
    return { schema: enforceKeyKinds(schema, 'ticking', ['text']), emit: (tick: number) => (queue.push(tick), wake?.()) };
  }

  it('refuses a kind it does not serve when the subscription starts', async () => {
    const { schema } = tickSchema();
    const result = (await subscribe({ schema, document: parse('subscription { ticks }'), contextValue: { principal: principalFor(undefined, 'live') } })) as ExecutionResult;
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
  });

  it('checks the kind once, when the subscription starts, not again on each event', async () => {
    const { schema, emit } = tickSchema();
    const principal = { ...principalFor(undefined, 'text') };
    let kindReads = 0;
    const counted = new Proxy(principal, { get: (target, property) => (property === 'kind' && kindReads++, Reflect.get(target, property)) });
    const events = (await subscribe({ schema, document: parse('subscription { ticks }'), contextValue: { principal: counted } })) as AsyncGenerator<ExecutionResult>;
    expect(kindReads).toBe(1);
    for (const tick of [1, 2, 3]) {
      emit(tick);
      expect((await events.next()).value).toEqual({ data: { ticks: tick } });
    }
    expect(kindReads).toBe(1);
    await events.return(undefined);
  });
});
