import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Supergraph } from '@apollo/federation-internals';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BridgeRoutes } from '../../edge/rest/bridge-routes.js';
import { membershipRoutes } from '../../edge/interfaces/membership/membership.routes.js';
import { tracerouteRestName, tracerouteRoutes, tracerouteStreamRoutes } from '../../edge/interfaces/traceroute/traceroute.routes.js';
import type { RestNamer } from '../../edge/rest/rest-names.js';
import type { KeyKind } from '../../core/principal.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';

// Every REST path of every mount, taken from the route tables the edge serves, gets random junk in
// its path parameters, query string, headers and body: no answer may be a 5xx, and no body may be
// cut off.

const NO_LIMIT = 1_000_000_000;
const TRACEROUTE_MAX = 10_000_000;
const bases = testConfig().restBases;
const apiSchema = Supergraph.build(readFileSync(path.resolve(import.meta.dirname, '../../schema/supergraph.graphql'), 'utf8'))
  .apiSchema()
  .toGraphQLJSSchema();

interface RestPath {
  method: string;
  /** Below the host, with `:name` placeholders. */
  path: string;
  /** The query parameters it reads, under their REST names. */
  params: string[];
  kinds: KeyKind[];
  keyIn: 'bearer' | 'x-api-key' | 'none';
}

/** A bridge's routes as REST paths, their parameters being the GraphQL arguments under their REST names. */
function fromRouteTable(base: string, routes: BridgeRoutes, kinds: KeyKind[], keyIn: RestPath['keyIn'], restName: RestNamer = () => undefined): RestPath[] {
  return Object.entries(routes).map(([coordinate, route]) => {
    const [type, field] = coordinate.split('.');
    const root = type === 'Query' ? apiSchema.getQueryType() : apiSchema.getMutationType();
    const args = root?.getFields()[field]?.args ?? [];
    return { method: route.method, path: base + route.path, params: args.map((a) => restName(`${coordinate}(${a.name}:)`) ?? a.name), kinds, keyIn };
  });
}

// The export's parameters are the search's filters plus its own (subgraphs/traceroute/export).
const searchParams = fromRouteTable(bases.traceroute, tracerouteRoutes, ['traceroute'], 'x-api-key', tracerouteRestName)[0].params;
const REST_PATHS: RestPath[] = [
  ...fromRouteTable(bases.membership, membershipRoutes, ['live', 'test'], 'bearer'),
  ...fromRouteTable(bases.traceroute, tracerouteRoutes, ['traceroute'], 'x-api-key', tracerouteRestName),
  ...Object.values(tracerouteStreamRoutes).map((route) => ({
    method: route.method,
    path: bases.traceroute + route.path,
    params: [...new Set([...searchParams, 'format', 'limit', 'include_hops', 'api_key'])],
    kinds: ['traceroute'] as KeyKind[],
    keyIn: 'x-api-key' as const,
  })),
  // The inference mounts serve no REST path yet: whatever is asked below them must still be a 4xx.
  { method: 'GET', path: `${bases.inferenceText}/:any`, params: [], kinds: ['text'], keyIn: 'bearer' },
  { method: 'POST', path: `${bases.inferenceImage}/:any`, params: [], kinds: ['image'], keyIn: 'bearer' },
  { method: 'GET', path: `${bases.inferenceProxy}/:any`, params: [], kinds: [], keyIn: 'none' },
  { method: 'POST', path: `${bases.inferenceGateway}/:any`, params: [], kinds: [], keyIn: 'none' },
];

let platform: TestPlatform;
const keys = {} as Record<KeyKind, string>;

beforeAll(async () => {
  platform = await startTestPlatform({
    rateLimits: { ...testConfig().rateLimits, livePerMinute: NO_LIMIT, testPerMinute: NO_LIMIT, inferencePerMinute: NO_LIMIT, anonymousPerMinute: NO_LIMIT },
  });
  for (const kind of ['live', 'test', 'text', 'image', 'traceroute'] as KeyKind[]) {
    keys[kind] = await platform.issueKey(`acct-paths-${kind}`, kind, kind === 'traceroute' ? { hourlyLimit: TRACEROUTE_MAX, dailyLimit: TRACEROUTE_MAX } : {});
  }
});

afterAll(async () => {
  await platform?.close();
});

/** Junk: any text, control characters and NUL, numbers of every shape, dates, ids, huge strings. */
const junk = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.constantFrom('', '\u0000', 'a\u0000b', '\u0001', '\u007f', '\n', '%', '%00', '%zz', '-1', '0', '1', '1e309', 'NaN', '2147483648', '99999999999', '0.5', 'true', 'null', '[]', '{}'),
  fc.constantFrom('2024-01-01T00:00:00Z', '2024-13-45', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '1.1.1.1', '::1', '300.1.1.1', 'pk_to_outside', 'failed', 'csv', 'json', 'PK'),
  fc.uuid(),
  fc.integer({ min: 1, max: 5000 }).map((n) => 'x'.repeat(n)),
);

function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '\uFFFD'));
  }
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

const request = fc.constantFrom(...REST_PATHS).chain((route) =>
  fc.record({
    route: fc.constant(route),
    method: fc.oneof({ weight: 4, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    segments: fc.array(fc.oneof(junk, fc.uuid()), { minLength: 4, maxLength: 4 }),
    query: fc.array(
      fc.tuple(fc.oneof({ weight: 4, arbitrary: route.params.length ? fc.constantFrom(...route.params) : junk }, { weight: 1, arbitrary: junk }), junk, fc.boolean()),
      { maxLength: 6 },
    ),
    key: route.kinds.length
      ? fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...route.kinds).map((kind) => keys[kind]) }, { weight: 1, arbitrary: junk })
      : fc.option(junk, { nil: undefined }),
    body: fc.option(fc.oneof(fc.json({ maxDepth: 3 }), junk, fc.dictionary(fc.constantFrom(...(route.params.length ? route.params : ['x'])), fc.jsonValue({ maxDepth: 1 }))), { nil: undefined }),
    headers: fc.record(
      {
        'content-type': fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', ''),
        accept: fc.constantFrom('*/*', 'text/csv', 'application/json', 'x/y'),
        'x-request-id': fc.oneof(fc.stringMatching(/^[\w.:-]{1,20}$/), fc.string({ maxLength: 10 })),
      },
      { requiredKeys: [] },
    ),
  }),
);

/** Whether fetch can send these headers at all (no control characters, nothing above U+00FF). */
function sendable(headers: Record<string, string>): boolean {
  try {
    return [...new Headers(headers).values()].every((value) => !/[^\t\x20-\x7e\x80-\xff]/.test(value));
  } catch {
    return false;
  }
}

describe('every REST path of every mount', () => {
  it('derives its paths from the route tables', () => {
    expect(REST_PATHS.length).toBeGreaterThan(Object.keys(membershipRoutes).length + Object.keys(tracerouteRoutes).length);
    expect(REST_PATHS.map((p) => p.path)).toContain(`${bases.traceroute}/traces/export`);
    expect(REST_PATHS.find((p) => p.path === `${bases.traceroute}/traces`)!.params).toEqual(expect.arrayContaining(['target_ip', 'include_hops', 'min_anomaly']));
  });

  it('answers random junk in path, query, headers and body with a client error or a whole success, never 5xx', async () => {
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(request, async ({ route, method, segments, query, key, body, headers }) => {
        const all: Record<string, string> = { ...headers };
        if (key !== undefined && route.keyIn === 'bearer') all.authorization = `Bearer ${key}`;
        if (key !== undefined && route.keyIn !== 'bearer') all['x-api-key'] = key;
        fc.pre(sendable(all));
        let i = 0;
        const target = route.path.replace(/:\w+/g, () => encode(segments[i++]));
        const search = query.map(([name, value, raw]) => (raw ? `${encode(name)}=${value.replace(/[#&\s]/g, encode)}` : `${encode(name)}=${encode(value)}`)).join('&');
        const url = `${platform.baseUrl}${target}${search ? `?${search}` : ''}`;
        const response = await fetch(url, {
          method,
          headers: all,
          body: method === 'GET' || method === 'HEAD' || body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        });
        sent++;
        // A body cut off mid-stream rejects here: that would be a server failure too.
        const text = await response.text();
        const what = `${method} ${url.slice(0, 300)} → ${response.status} ${text.slice(0, 300)}`;
        expect(response.status, what).toBeLessThan(500);
        if (method !== 'HEAD' && /json/.test(response.headers.get('content-type') ?? '')) expect(() => JSON.parse(text), what).not.toThrow();
      }),
      { numRuns: Number(process.env.FAST_CHECK_RUNS ?? 1500) },
    );
    expect(sent).toBeGreaterThan(1000);
  }, 120_000);

  it('still answers /health with 200 after all of it', async () => {
    expect((await platform.request('/health')).status).toBe(200);
  });
});
