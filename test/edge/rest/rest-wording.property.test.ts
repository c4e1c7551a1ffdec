import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

// Over every route of both REST interfaces, whatever parameters a client sends (known ones with
// values of any JSON type, unknown ones, odd path ids), the answer is never a 5xx, an error is in
// the interface's own body and words (no GraphQL wording reaches a REST client), and a parameter
// error names its parameter. The routes and their parameters are read from the served OpenAPI
// documents, as a client would read them.

let platform: TestPlatform;
let keys: { membership: string; traceroute: string };
const NO_LIMIT = 1_000_000_000;
const RUNS = Number(process.env.FAST_CHECK_RUNS ?? 4);

/** What GraphQL says and a REST client must never read. */
const GRAPHQL_WORDING = /Variable "\$|cannot represent|got invalid value|of required type|Expected type|Syntax Error|Unknown argument|was not provided|Int cannot|String cannot|GraphQL/i;
const PARAMETER_CODES = new Set(['invalid_parameter', 'unknown_parameter', 'missing_parameter']);

interface Operation {
  method: string;
  path: string;
  query: string[];
  body: string[];
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown>; $ref?: string } }> } }>>;
  components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> };
}

async function operationsOf(base: string): Promise<Operation[]> {
  const document = (await (await platform.request(`${base}/openapi.json`)).json()) as OpenApiDocument;
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      const resolved = schema?.$ref ? document.components?.schemas?.[schema.$ref.split('/').pop()!] : schema;
      operations.push({
        method: method.toUpperCase(),
        path,
        query: (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        body: Object.keys(resolved?.properties ?? {}),
      });
    }
  }
  return operations;
}

const value = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('2026-02-30', '2026-01-01', 'not-a-date', '00000000-0000-4000-8000-000000000000', 'LIVE', '-1', '1e309', '1'),
  fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxLength: 3 }),
  fc.dictionary(fc.constantFrom('description', 'unitAmount', 'quantity', 'x'), fc.oneof(fc.string({ maxLength: 6 }), fc.integer()), { maxKeys: 3 }),
);

/** A request for `operation`: some of its parameters (and maybe an unknown one) with arbitrary values, an odd or plausible path id. */
function requestFor(operation: Operation) {
  const names = operation.method === 'GET' || operation.method === 'DELETE' ? operation.query : operation.body;
  return fc.record({
    id: fc.oneof(fc.uuid(), fc.constantFrom('x', '%00', '00000000-0000-4000-8000-000000000000', '1')),
    params: fc.dictionary(fc.constantFrom(...names, 'unknownParam'), value, { maxKeys: 4 }),
  });
}

async function check(base: string, key: { header: string; value: string }, operation: Operation, input: { id: string; params: Record<string, unknown> }) {
  const path = `${base}${operation.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(input.id))}`;
  const bodyless = operation.method === 'GET' || operation.method === 'DELETE';
  const query = bodyless
    ? new URLSearchParams(Object.entries(input.params).map(([name, v]) => [name, typeof v === 'string' ? v : JSON.stringify(v)])).toString()
    : '';
  const response = await platform.request(query ? `${path}?${query}` : path, {
    method: operation.method,
    headers: { [key.header]: key.value },
    ...(bodyless ? {} : { json: input.params }),
  });
  const text = await response.text();
  const what = `${operation.method} ${path}${query ? `?${query}` : ''} ${bodyless ? '' : JSON.stringify(input.params)} -> ${response.status} ${text}`;
  expect(response.status, what).toBeLessThan(500);
  if (response.status < 400) return;
  const body = JSON.parse(text) as { error: string | { code: string; message: string; param: string | null }; message?: string; param?: string };
  // Membership: Stripe's {error: {code, message, param}}; traceroute: {error, message, param}.
  const error = typeof body.error === 'string' ? { code: body.error, message: body.message ?? '', param: body.param ?? null } : body.error;
  expect(error.code, what).toMatch(/^[a-z_]+$/);
  expect(error.message, what).not.toMatch(GRAPHQL_WORDING);
  if (PARAMETER_CODES.has(error.code)) expect(error.param, what).toBeTruthy();
}

beforeAll(async () => {
  platform = await startTestPlatform({
    rateLimits: { livePerMinute: NO_LIMIT, testPerMinute: NO_LIMIT, inferencePerMinute: NO_LIMIT, anonymousPerMinute: NO_LIMIT },
  });
  keys = { membership: await platform.issueKey('acct-wording'), traceroute: await platform.issueKey('acct-wording-traces', 'traceroute') };
});

afterAll(async () => {
  await platform?.close();
});

describe('REST answers in the interface\'s words, over every route', () => {
  it('membership: never a 5xx, never GraphQL wording, always the parameter named', async () => {
    const operations = await operationsOf('/api/v1');
    expect(operations.length).toBeGreaterThan(40);
    for (const operation of operations) {
      await fc.assert(
        fc.asyncProperty(requestFor(operation), (input) => check('/api/v1', { header: 'authorization', value: `Bearer ${keys.membership}` }, operation, input)),
        { numRuns: RUNS },
      );
    }
  }, 240_000);

  it('traceroute: never a 5xx, never GraphQL wording, always the parameter named', async () => {
    const operations = await operationsOf('/v1/public');
    expect(operations.length).toBeGreaterThanOrEqual(3);
    for (const operation of operations) {
      await fc.assert(
        fc.asyncProperty(requestFor(operation), (input) => check('/v1/public', { header: 'x-api-key', value: keys.traceroute }, operation, input)),
        { numRuns: RUNS * 5 },
      );
    }
  }, 240_000);
});
