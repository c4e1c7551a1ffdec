import http from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_JSON_MAX_DEPTH, nestsDeeperThan } from '../../core/json-depth.js';
import { loadConfig } from '../../platform/config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

// JSON nested past JSON_MAX_DEPTH is refused with 400 in each interface's error body before
// anything walks it; at the bound it is read as usual. The platform runs with a bound of its own,
// so each interface is seen to read the setting rather than a constant.

const BOUND = 40;
const NO_LIMIT = 1_000_000_000;
let platform: TestPlatform;
let live: string;
let text: string;
let traceroute: string;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  platform = await startTestPlatform({
    jsonMaxDepth: BOUND,
    rateLimits: { livePerMinute: NO_LIMIT, testPerMinute: NO_LIMIT, inferencePerMinute: NO_LIMIT, anonymousPerMinute: NO_LIMIT },
  });
  live = await platform.issueKey('acct-depth', 'live');
  text = await platform.issueKey('acct-depth-text', 'text');
  traceroute = await platform.issueKey('acct-depth-trace', 'traceroute', { hourlyLimit: 1_000_000, dailyLimit: 1_000_000 });
});

afterAll(async () => {
  for (const socket of sockets) socket.terminate();
  await platform?.close();
});

/** JSON text of `levels` nested objects around 1, as text: deeper than JSON.stringify can go. */
const objects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
/** JSON text of `levels` nested arrays. */
const arrays = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

async function answer(response: Response): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const text = await response.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Left empty: the assertions on the body then show the text.
  }
  return { status: response.status, body, text };
}

const post = (path: string, body: string, key?: string, headers: Record<string, string> = {}) =>
  platform.request(path, { method: 'POST', key, body, headers: { 'content-type': 'application/json', ...headers } }).then(answer);

/** A request fetch will not make (a body on GET), over node:http. */
function rawRequest(method: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${platform.baseUrl}${path}`, { method, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

const member = (customFields: string) => `{"name": "Deep", "email": "deep-${Math.random().toString(36).slice(2)}@example.org", "customFields": ${customFields}}`;
const CREATE_MEMBER = 'mutation Create($name: String!, $email: String!, $customFields: JSONObject) { createMember(name: $name, email: $email, customFields: $customFields) { id } }';
const graphqlBody = (variables: string) => `{"query": ${JSON.stringify(CREATE_MEMBER)}, "variables": ${variables}}`;

describe('the nesting bound', () => {
  it('is JSON_MAX_DEPTH, 64 unless set', () => {
    expect(loadConfig({ NODE_ENV: 'test', INTERNAL_SECRET: 'x'.repeat(32) }).jsonMaxDepth).toBe(DEFAULT_JSON_MAX_DEPTH);
    expect(DEFAULT_JSON_MAX_DEPTH).toBe(64);
    expect(loadConfig({ NODE_ENV: 'test', INTERNAL_SECRET: 'x'.repeat(32), JSON_MAX_DEPTH: '100' }).jsonMaxDepth).toBe(100);
  });

  it('leaves room for honest bodies: a chat request with a tool whose parameters nest ten objects deep', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 10; level++) schema = { type: 'object', properties: { inner: schema, note: { type: 'string' } }, required: ['inner'] };
    const chat = {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [{ type: 'function', function: { name: 'f', parameters: schema } }],
    };
    expect(nestsDeeperThan(chat, 30)).toBe(false);
    expect(nestsDeeperThan({ customFields: { plan: 'gold' } }, 2)).toBe(false);
  });

  it('is measured without recursion, at any depth', () => {
    expect(nestsDeeperThan(JSON.parse(arrays(200_000)), DEFAULT_JSON_MAX_DEPTH)).toBe(true);
    expect(nestsDeeperThan(JSON.parse(arrays(3)), 3)).toBe(false);
    expect(nestsDeeperThan(JSON.parse(arrays(4)), 3)).toBe(true);
  });
});

describe('membership REST', () => {
  it('refuses customFields nested 5,000 levels with 400 invalid_body, not 500', async () => {
    const { status, body, text } = await post('/api/v1/members', member(objects(5_000)), live);
    expect(status, text).toBe(400);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_body', param: null });
    expect(String((body.error as { message: string }).message)).toContain(String(BOUND));
  });

  it('refuses one level past the bound and reads the body at the bound', async () => {
    // The body is one level, customFields the next: BOUND - 1 levels inside it is BOUND in all.
    const past = await post('/api/v1/members', member(objects(BOUND)), live);
    expect(past.status, past.text).toBe(400);
    expect(past.body.error).toMatchObject({ code: 'invalid_body' });
    const at = await post('/api/v1/members', member(objects(BOUND - 1)), live);
    // Read as usual: customFields takes flat values only.
    expect(at.status, at.text).toBe(400);
    expect(at.body.error).toMatchObject({ code: 'invalid_parameter', param: 'customFields' });
  });

  it('refuses a deep body on an update and on a JSON document upload', async () => {
    const created = await post('/api/v1/members', member('{"plan": "gold"}'), live);
    expect(created.status, created.text).toBe(201);
    const update = await platform.request(`/api/v1/members/${String(created.body.id)}`, { method: 'PUT', key: live, body: `{"customFields": ${arrays(5_000)}}`, headers: { 'content-type': 'application/json' } }).then(answer);
    expect(update.status, update.text).toBe(400);
    expect(update.body.error).toMatchObject({ code: 'invalid_body' });
    const upload = await post('/api/v1/documents/upload', `{"filename": "a.txt", "content": "aGVsbG8=", "tags": ${arrays(5_000)}}`, live);
    expect(upload.status, upload.text).toBe(400);
    expect(upload.body.error).toMatchObject({ code: 'invalid_body' });
  });
});

describe('traceroute REST', () => {
  it('refuses a deep body with 400 invalid_body in its own error body', async () => {
    const answered = await rawRequest('GET', '/v1/public/traces', { 'x-api-key': traceroute, 'content-type': 'application/json' }, `{"limit": ${arrays(5_000)}}`);
    expect(answered.status).toBe(400);
    expect(answered.body).toMatchObject({ error: 'invalid_body' });
  });
});

describe('/graphql', () => {
  const expectBadInput = (answered: { status: number; body: Record<string, unknown>; text: string }) => {
    expect(answered.status, answered.text).toBe(400);
    expect((answered.body.errors as { extensions: Record<string, unknown> }[])[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_body' });
  };

  it('refuses a variable nested 5,000 levels with 400 BAD_USER_INPUT, not 500', async () => {
    expectBadInput(await post('/graphql', graphqlBody(`{"name": "Deep", "email": "deep-gql@example.org", "customFields": ${objects(5_000)}}`), live));
  });

  it('refuses one level past the bound; at the bound the operation runs', async () => {
    expectBadInput(await post('/graphql', graphqlBody(`{"name": "Deep", "email": "deep-gql1@example.org", "customFields": ${objects(BOUND - 1)}}`), live));
    const at = await post('/graphql', graphqlBody(`{"name": "Deep", "email": "deep-gql2@example.org", "customFields": ${objects(BOUND - 2)}}`), live);
    expect((at.body.errors as { extensions: Record<string, unknown> }[])[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'customFields' });
  });

  it('refuses deep extensions, and deep variables in a GET', async () => {
    expectBadInput(await post('/graphql', `{"query": "{ __typename }", "extensions": ${arrays(5_000)}}`, live));
    const query = new URLSearchParams({ query: '{ __typename }', variables: `{"v": ${arrays(2_000)}}` });
    expectBadInput(await platform.request(`/graphql?${query}`, { key: live, headers: { 'apollo-require-preflight': 'true' } }).then(answer));
  });

  it('refuses a value in the document nested past the bound with 400 GRAPHQL_VALIDATION_FAILED', async () => {
    const literal = `${'{a: '.repeat(BOUND + 1)}1${'}'.repeat(BOUND + 1)}`;
    const answered = await post('/graphql', JSON.stringify({ query: `mutation { createMember(name: "D", email: "deep-lit@example.org", customFields: ${literal}) { id } }` }), live);
    expect(answered.status, answered.text).toBe(400);
    expect((answered.body.errors as { extensions: Record<string, unknown> }[])[0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED', reason: 'max_value_depth' });
  });

  it('refuses a selection nested 5,000 levels with 400, as the abuse limits say', async () => {
    const answered = await post('/graphql', JSON.stringify({ query: `{ ${'members { data { '.repeat(5_000)}id${' } }'.repeat(5_000)} }` }), live);
    expect(answered.status, answered.text).toBe(400);
    expect((answered.body.errors as { extensions: Record<string, unknown> }[])[0].extensions).toMatchObject({ code: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it('over graphql-ws: a deep variable is an error for that operation, and the socket lives on', async () => {
    // Raw frames: a client library would fail to serialise the variables itself.
    const socket = new WebSocket(platform.graphqlUrl.replace(/^http/, 'ws'), 'graphql-transport-ws');
    sockets.push(socket);
    const messages: { id?: string; type: string; payload?: unknown }[] = [];
    const waiters: (() => void)[] = [];
    socket.on('message', (data) => {
      messages.push(JSON.parse(String(data)) as (typeof messages)[number]);
      for (const wake of waiters.splice(0)) wake();
    });
    let closedWith: number | undefined;
    const closed = new Promise<number>((resolve) =>
      socket.on('close', (code) => {
        closedWith = code;
        for (const wake of waiters.splice(0)) wake();
        resolve(code);
      }),
    );
    const message = async (predicate: (m: (typeof messages)[number]) => boolean) => {
      for (;;) {
        const found = messages.find(predicate);
        if (found) return found;
        if (closedWith !== undefined) throw new Error(`the socket closed with ${closedWith}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    };
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${live}` } }));
    await message((m) => m.type === 'connection_ack');
    const variables = `{"name": "Deep", "email": "deep-ws@example.org", "customFields": ${objects(5_000)}}`;
    socket.send(`{"id": "deep", "type": "subscribe", "payload": {"query": ${JSON.stringify(CREATE_MEMBER)}, "variables": ${variables}}}`);
    const refused = await message((m) => m.id === 'deep');
    expect(refused.type).toBe('error');
    expect((refused.payload as { extensions: Record<string, unknown> }[])[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_body' });
    socket.send(JSON.stringify({ id: 'after', type: 'subscribe', payload: { query: '{ __typename }' } }));
    expect(await message((m) => m.id === 'after' && m.type === 'next')).toMatchObject({ payload: { data: { __typename: 'Query' } } });
    socket.close(1000);
    expect(await closed).toBe(1000);
  });
});

describe('the dashboard API', () => {
  it('refuses a deep body with 400 invalid_body in its error body', async () => {
    const answered = await post('/dashboard/api/session', `{"email": "a@example.org", "password": ${arrays(5_000)}}`);
    expect(answered.status, answered.text).toBe(400);
    expect(answered.body).toEqual({ error: { code: 'invalid_body', message: expect.stringContaining(String(BOUND)) } });
  });
});

describe('the inference mounts', () => {
  const chat = (extra: string) => `{"model": "nowhere", "messages": [{"role": "user", "content": "hi"}], "name": ${extra}}`;

  it.each([
    ['/inference/text', true],
    ['/inference/image', true],
    ['/inference/proxy', false],
    ['/inference/gateway', false],
  ])('%s refuses a body past the bound with OpenAI\'s 400 invalid_body', async (mount, keyed) => {
    for (const levels of [5_000, BOUND]) {
      const answered = await post(`${mount}/v1/chat/completions`, chat(arrays(levels)), keyed ? text : undefined);
      expect(answered.status, answered.text).toBe(400);
      expect(answered.body).toEqual({ error: { message: expect.stringContaining(String(BOUND)), type: 'invalid_request_error', param: null, code: 'invalid_body' } });
    }
  });

  it('reads a body at the bound as usual', async () => {
    const answered = await post('/inference/text/v1/chat/completions', chat(arrays(BOUND - 2)), text);
    expect(answered.body).toMatchObject({ error: { code: 'unknown_parameter', param: 'name' } });
  });
});

describe('odd and deep JSON on every REST interface', () => {
  /** Any JSON value, sometimes wrapped in many levels of arrays or objects. */
  const oddJson = fc
    .tuple(fc.jsonValue({ maxDepth: 4 }), fc.oneof(fc.integer({ min: 0, max: 2 * BOUND }), fc.integer({ min: 1_000, max: 20_000 })), fc.boolean())
    .map(([value, levels, inArrays]) => {
      const inner = JSON.stringify(value) ?? 'null';
      return inArrays ? `${'['.repeat(levels)}${inner}${']'.repeat(levels)}` : `${'{"k":'.repeat(levels)}${inner}${'}'.repeat(levels)}`;
    });
  const TARGETS: { method: string; path: string; headers: () => Record<string, string>; wrap: (json: string) => string }[] = [
    { method: 'POST', path: '/api/v1/members', headers: () => ({ authorization: `Bearer ${live}` }), wrap: (json) => `{"name": "P", "email": "p@example.org", "customFields": ${json}}` },
    { method: 'POST', path: '/api/v1/invoices', headers: () => ({ authorization: `Bearer ${live}` }), wrap: (json) => json },
    { method: 'POST', path: '/api/v1/documents/upload', headers: () => ({ authorization: `Bearer ${live}` }), wrap: (json) => `{"filename": "p.txt", "content": "aGk=", "tags": ${json}}` },
    { method: 'GET', path: '/v1/public/traces', headers: () => ({ 'x-api-key': traceroute }), wrap: (json) => json },
    { method: 'POST', path: '/graphql', headers: () => ({ authorization: `Bearer ${live}` }), wrap: (json) => graphqlBody(`{"name": "P", "email": "p@example.org", "customFields": ${json}}`) },
    { method: 'POST', path: '/dashboard/api/session', headers: () => ({}), wrap: (json) => `{"email": "p@example.org", "password": ${json}}` },
    { method: 'POST', path: '/inference/proxy/v1/chat/completions', headers: () => ({}), wrap: (json) => `{"model": "nowhere", "messages": ${json}}` },
  ];

  it('never answers 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TARGETS), oddJson, async (target, json) => {
        const answered = await rawRequest(target.method, target.path, { 'content-type': 'application/json', ...target.headers() }, target.wrap(json));
        expect(answered.status, `${target.method} ${target.path} ${json.slice(0, 200)}`).toBeLessThan(500);
      }),
      { numRuns: 120 },
    );
  }, 120_000);
});
