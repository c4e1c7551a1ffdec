import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_ABUSE_LIMITS } from '../../edge/federation/abuse-limits.js';
import { loadConfig } from '../../platform/config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

let platform: TestPlatform;
let key: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  key = await platform.issueKey('acct');
});

afterAll(async () => {
  await platform?.close();
});

interface GraphQLBody {
  data?: any;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

async function answer(response: Response): Promise<{ status: number; body: GraphQLBody }> {
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as GraphQLBody };
  } catch {
    throw new Error(`${response.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
}

const graphql = async (query: string, init: { operationName?: string } = {}) =>
  answer(await platform.request('/graphql', { method: 'POST', key, json: { query, ...init } }));

function expectRefused(result: { status: number; body: GraphQLBody }, code: string, reason?: string) {
  expect(result.status, JSON.stringify(result.body)).toBe(400);
  expect(result.body.data).toBeUndefined();
  expect(result.body.errors![0].extensions).toEqual(reason ? { code, reason } : { code });
}

describe('query limits at the edge', () => {
  it('runs the deepest query the schema has', async () => {
    const result = await graphql('{ jobPostings { data { postedBy { name } } } }');
    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
  });

  it('refuses a query deeper than the limit with 400 GRAPHQL_VALIDATION_FAILED max_depth', async () => {
    // The schema has no cycles, so fragments make up the depth: each counts as a level.
    const result = await graphql('{ jobPostings { data { postedBy { ... on Member { ... on Member { ... on Member { id } } } } } } }');
    expectRefused(result, 'GRAPHQL_VALIDATION_FAILED', 'max_depth');
    expect(result.body.errors![0].message).toBe(`Query depth limit of ${DEFAULT_ABUSE_LIMITS.maxDepth} exceeded, found 7.`);
  });

  it('refuses more aliases than the limit with 400 max_aliases', async () => {
    const aliases = Array.from({ length: DEFAULT_ABUSE_LIMITS.maxAliases + 1 }, (_, i) => `p${i}: providers { id }`);
    expectRefused(await graphql(`{ ${aliases.join(' ')} }`), 'GRAPHQL_VALIDATION_FAILED', 'max_aliases');
  });

  it('refuses a document of too many tokens with 400 max_tokens, not 500', async () => {
    // `query Qn { providers { id } }` is 8 tokens.
    const operations = Array.from({ length: DEFAULT_ABUSE_LIMITS.maxTokens / 8 + 1 }, (_, i) => `query Q${i} { providers { id } }`);
    expectRefused(await graphql(operations.join('\n'), { operationName: 'Q0' }), 'GRAPHQL_VALIDATION_FAILED', 'max_tokens');
  });
});

describe('request bodies at the edge', () => {
  it('answers a body over 1 MB with 413, not 500', async () => {
    const result = await answer(
      await platform.request('/graphql', {
        method: 'POST',
        key,
        json: { query: 'query($pad: String) { providers { id } }', variables: { pad: 'x'.repeat(1024 * 1024) } },
      }),
    );
    expect(result.status).toBe(413);
    expect(result.body.errors![0].extensions).toEqual({ code: 'BAD_REQUEST', reason: 'payload_too_large' });
  });

  it('answers malformed JSON with 400', async () => {
    const result = await answer(
      await platform.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'application/json' },
        body: '{"query": "{ providers { id } }"',
      }),
    );
    expectRefused(result, 'BAD_REQUEST', 'entity_parse_failed');
  });
});

describe('CSRF prevention at the edge', () => {
  // Data a live key may read: the inference subgraph serves text and image keys only.
  const query = encodeURIComponent('{ members { data { id } } }');

  it('refuses a GET query without a preflight header with 400', async () => {
    expectRefused(await answer(await platform.request(`/graphql?query=${query}`, { key })), 'BAD_REQUEST');
  });

  it('refuses a text/plain POST without a preflight header with 400', async () => {
    const result = await answer(
      await platform.request('/graphql', {
        method: 'POST',
        key,
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ query: '{ providers { id } }' }),
      }),
    );
    expectRefused(result, 'BAD_REQUEST');
    expect(result.body.errors![0].message).toMatch(/Cross-Site Request Forgery/);
  });

  it('runs a GET query that carries apollo-require-preflight', async () => {
    const result = await answer(await platform.request(`/graphql?query=${query}`, { key, headers: { 'apollo-require-preflight': 'true' } }));
    expect(result.status).toBe(200);
    expect(result.body.errors).toBeUndefined();
    expect(Array.isArray(result.body.data.members.data)).toBe(true);
  });
});

describe('introspection', () => {
  it('is on with the default configuration outside production, and off in production', () => {
    const env = { DATA_DIR: '/tmp/platform-test-unused', INTERNAL_SECRET: 'x'.repeat(32) };
    expect(loadConfig({ ...env, NODE_ENV: 'test' }).introspection).toBe(true);
    expect(loadConfig({ ...env, NODE_ENV: 'development' }).introspection).toBe(true);
    expect(loadConfig({ ...env, NODE_ENV: 'production' }).introspection).toBe(false);
    expect(loadConfig({ ...env, NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }).introspection).toBe(true);
  });

  it('answers an introspection query on the test platform', async () => {
    const result = await graphql('{ __schema { queryType { name } types { name } } }');
    expect(result.status).toBe(200);
    expect(result.body.data.__schema.queryType.name).toBe('Query');
    expect(result.body.data.__schema.types.map((t: { name: string }) => t.name)).toContain('Member');
  });

  it('shows field suggestions while introspection is on', async () => {
    const result = await graphql('{ providers { nam } }');
    expect(result.status).toBe(400);
    expect(result.body.errors![0].message).toBe('Cannot query field "nam" on type "Provider". Did you mean "name"?');
  });
});
