import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Supergraph } from '@apollo/federation-internals';
import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isLeafType,
  type GraphQLField,
  type GraphQLInputType,
} from 'graphql';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SUBGRAPH_PARTS } from '../../schema/subgraph-catalog.js';
import { buildPartsSchema } from '../../subgraphs/shared/subgraph.js';
import { KEY_KINDS, type KeyKind } from '../../core/principal.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/**
 * Which key kinds each subgraph serves, as issue 10 states it: traceroute data for traceroute
 * (and admin) keys, inference for text and image keys (and admin, for the operators' provider
 * status), membership and marketplace for live and test keys. A new subgraph fails here until
 * its kinds are decided.
 */
const SERVES: Record<string, readonly KeyKind[]> = {
  membership: ['live', 'test'],
  marketplace: ['live', 'test'],
  inference: ['text', 'image', 'admin'],
  traceroute: ['traceroute', 'admin'],
};

const HIGH = 1_000_000;
let platform: TestPlatform;
const keys = {} as Record<KeyKind, string>;

beforeAll(async () => {
  platform = await startTestPlatform({
    rateLimits: { livePerMinute: HIGH, testPerMinute: HIGH, inferencePerMinute: HIGH, anonymousPerMinute: HIGH },
  });
  for (const kind of KEY_KINDS) {
    keys[kind] = await platform.issueKey(`walk-${kind}`, kind, kind === 'traceroute' ? { hourlyLimit: HIGH, dailyLimit: HIGH } : {});
  }
});
afterAll(async () => {
  await platform?.close();
});

/** A value of `type` that passes validation; what the resolver then makes of it does not matter here. */
function sample(type: GraphQLInputType): unknown {
  if (isNonNullType(type)) return sample(type.ofType);
  if (isListType(type)) return [sample(type.ofType)];
  if (isEnumType(type)) return type.getValues()[0].name;
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .filter((field) => isNonNullType(field.type) && field.defaultValue === undefined)
        .map((field) => [field.name, sample(field.type)]),
    );
  }
  const scalars: Record<string, unknown> = {
    Int: 1,
    SafeInt: 1,
    Float: 1,
    Boolean: false,
    DateTime: '2026-01-01T00:00:00Z',
    LocalDate: '2026-01-01',
    JSONObject: {},
  };
  return scalars[type.name] ?? 'walk';
}

/** The smallest operation that calls `field` at the root: its required arguments as variables, `__typename` below. */
function operationFor(operation: string, field: GraphQLField<unknown, unknown>) {
  const required = field.args.filter((arg) => isNonNullType(arg.type) && arg.defaultValue === undefined);
  const declared = required.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
  const passed = required.map((arg) => `${arg.name}: $${arg.name}`).join(', ');
  return {
    query: `${operation} Walk${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''}${isLeafType(getNamedType(field.type)) ? '' : ' { __typename }'} }`,
    variables: Object.fromEntries(required.map((arg) => [arg.name, sample(arg.type)])),
  };
}

interface Answer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
}

const kindRefusal = (answer: Answer) => answer.errors?.find((error) => error.extensions?.reason === 'wrong_key_kind');

/** The public API: a subgraph's @inaccessible root fields (the gateway's own relays) are no client's to call. */
const apiSchema = Supergraph.build(readFileSync(path.resolve(import.meta.dirname, '../../schema/supergraph.graphql'), 'utf8')).apiSchema().toGraphQLJSSchema();
const isPublic = (operation: 'query' | 'mutation' | 'subscription', name: string) => {
  const root = operation === 'query' ? apiSchema.getQueryType() : operation === 'mutation' ? apiSchema.getMutationType() : apiSchema.getSubscriptionType();
  return !!root?.getFields()[name];
};

/** Public root fields of every subgraph, read from its own schema, so that a new field is walked too. */
const ROOT_FIELDS = await Promise.all(
  SUBGRAPH_PARTS.map(async (parts) => {
    const schema = await buildPartsSchema(parts);
    const fields = (['query', 'mutation', 'subscription'] as const).flatMap((operation) => {
      const root = operation === 'query' ? schema.getQueryType() : operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType();
      return Object.values(root?.getFields() ?? {})
        .filter((field) => !field.name.startsWith('_') && isPublic(operation, field.name))
        .map((field) => ({ operation, field }));
    });
    return { parts, fields };
  }),
);

describe('key kinds per subgraph', () => {
  it('declares, in each subgraph, the kinds the issue assigns to it', () => {
    for (const { parts } of ROOT_FIELDS) {
      expect(SERVES[parts.name], `no decision for ${parts.name}`).toBeDefined();
      expect([...parts.servesKinds].sort(), parts.name).toEqual([...SERVES[parts.name]].sort());
    }
  });

  it('walks every key kind against every root query and mutation through /graphql: FORBIDDEN unless the subgraph serves the kind', async () => {
    let walked = 0;
    for (const { parts, fields } of ROOT_FIELDS) {
      for (const { operation, field } of fields.filter((f) => f.operation !== 'subscription')) {
        for (const kind of KEY_KINDS) {
          const what = `${kind} key → ${parts.name} ${operation} ${field.name}`;
          const response = await platform.request('/graphql', { method: 'POST', key: keys[kind], json: operationFor(operation, field) });
          const answer = (await response.json()) as Answer;
          // Executed, not stopped before (validation, rate limit): otherwise nothing was tested.
          expect('data' in answer, `${what}: ${JSON.stringify(answer)}`).toBe(true);
          // A field the subgraph serves to other kinds than the rest (kindsByField, e.g. Mutation.qualifyVendor for admin keys).
          const serves = parts.kindsByField?.[`${operation === 'query' ? 'Query' : 'Mutation'}.${field.name}`] ?? SERVES[parts.name];
          if (serves.includes(kind)) {
            expect(kindRefusal(answer), what).toBeUndefined();
          } else {
            const refusal = kindRefusal(answer);
            expect(refusal, `${what}: ${JSON.stringify(answer)}`).toMatchObject({ path: [field.name], extensions: { code: 'FORBIDDEN' } });
            expect(refusal!.message, what).toContain(`serves ${serves.join(', ')} keys only`);
            expect(answer.data?.[field.name] ?? null, what).toBeNull();
          }
          walked += 1;
        }
      }
    }
    // Every subgraph has root fields; far fewer walked means the schemas were not read.
    expect(walked).toBeGreaterThan(KEY_KINDS.length * 50);
  });

  it('walks every key kind against every root subscription over graphql-ws', async () => {
    const subscriptions = ROOT_FIELDS.flatMap(({ parts, fields }) =>
      fields.filter((f) => f.operation === 'subscription').map(({ field }) => ({ parts, field })),
    );
    expect(subscriptions.length).toBeGreaterThan(0);
    for (const kind of KEY_KINDS) {
      const client = createClient({
        url: platform.graphqlUrl.replace(/^http/, 'ws'),
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${keys[kind]}` },
        retryAttempts: 0,
      });
      try {
        for (const { parts, field } of subscriptions) {
          const what = `${kind} key → ${parts.name} subscription ${field.name}`;
          // The first thing the subscription says, or nothing within a second (it is open and waits for events).
          const first = await new Promise<unknown>((resolve) => {
            const timer = setTimeout(() => {
              stop();
              resolve('open');
            }, 1000);
            const stop = client.subscribe(operationFor('subscription', field), {
              next: (value) => (clearTimeout(timer), stop(), resolve(value)),
              error: (error) => (clearTimeout(timer), resolve({ errors: error })),
              complete: () => (clearTimeout(timer), resolve('complete')),
            });
          });
          const text = JSON.stringify(first);
          if ((parts.kindsByField?.[`Subscription.${field.name}`] ?? SERVES[parts.name]).includes(kind)) expect(text, what).not.toContain('wrong_key_kind');
          else {
            expect(text, what).toContain('wrong_key_kind');
            expect(text, what).toContain('FORBIDDEN');
          }
        }
      } finally {
        await client.dispose();
      }
    }
  });
});

describe('traceroute keys over /graphql', () => {
  it('counts in the same hourly window as over REST: the two add up to the limit', async () => {
    const key = await platform.issueKey('walk-count', 'traceroute', { hourlyLimit: 6, dailyLimit: 100 });
    const graphql = () => platform.request('/graphql', { method: 'POST', key, json: { query: '{ traces { __typename } }' } });
    const rest = () => platform.request('/v1/public/traces', { headers: { 'x-api-key': key } });
    for (let i = 0; i < 3; i++) {
      expect((await rest()).status).toBe(200);
      const answer = await graphql();
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-remaining')).toBe(String(6 - 2 * (i + 1)));
    }
    const refusedOverGraphql = await graphql();
    expect(refusedOverGraphql.status).toBe(429);
    expect(((await refusedOverGraphql.json()) as Answer).errors![0].extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'rate_limit_hourly' });
    const refusedOverRest = await rest();
    expect(refusedOverRest.status).toBe(429);
    expect(((await refusedOverRest.json()) as { error: string }).error).toBe('rate_limit_hourly');
  });

  it('counts in the same daily window as over REST', async () => {
    const key = await platform.issueKey('walk-daily', 'traceroute', { hourlyLimit: 100, dailyLimit: 2 });
    expect((await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } })).status).toBe(200);
    expect((await platform.request('/graphql', { method: 'POST', key, json: { query: '{ traces { __typename } }' } })).status).toBe(200);
    const refused = await platform.request('/graphql', { method: 'POST', key, json: { query: '{ traces { __typename } }' } });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as Answer).errors![0].extensions).toMatchObject({ reason: 'rate_limit_daily' });
  });
});
