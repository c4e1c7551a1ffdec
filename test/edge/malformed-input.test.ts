import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyKind } from '../../core/principal.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

// Property tests of the edge: whatever a client sends, the answer is a client error or a success,
// in the interface's own body, and the process keeps serving.

let platform: TestPlatform;
const keys = {} as Record<KeyKind, string>;
const KINDS: KeyKind[] = ['live', 'test', 'text', 'image', 'traceroute'];
// No limit trips during the run: refusals would hide the validation paths behind 429s.
const NO_LIMIT = 1_000_000_000;
// The most a traceroute key may be given.
const TRACEROUTE_MAX = 10_000_000;

beforeAll(async () => {
  platform = await startTestPlatform({
    rateLimits: { livePerMinute: NO_LIMIT, testPerMinute: NO_LIMIT, inferencePerMinute: NO_LIMIT, anonymousPerMinute: NO_LIMIT },
  });
  for (const kind of KINDS) {
    keys[kind] = await platform.issueKey(`acct-fuzz-${kind}`, kind, kind === 'traceroute' ? { hourlyLimit: TRACEROUTE_MAX, dailyLimit: TRACEROUTE_MAX } : {});
  }
});

afterAll(async () => {
  await platform?.close();
});

type Mount = 'membership' | 'traceroute' | 'inference' | 'graphql';

const MOUNTS: { base: string; mount: Mount; kinds: KeyKind[] }[] = [
  { base: '/api/v1', mount: 'membership', kinds: ['live', 'test'] },
  { base: '/v1/public', mount: 'traceroute', kinds: ['traceroute'] },
  { base: '/inference/text', mount: 'inference', kinds: ['text'] },
  { base: '/inference/image', mount: 'inference', kinds: ['image', 'text'] },
  { base: '/inference/proxy', mount: 'inference', kinds: [] },
  { base: '/inference/gateway', mount: 'inference', kinds: [] },
  { base: '/graphql', mount: 'graphql', kinds: KINDS },
];

/** The mount a URL lands on once fetch has resolved its dot segments (`/x/../graphql` is /graphql). */
function mountOf(url: string): Mount | undefined {
  const path = new URL(url).pathname;
  return MOUNTS.find(({ base }) => path === base || path.startsWith(`${base}/`))?.mount;
}

// ---- arbitraries -------------------------------------------------------------------------------

/** Any text: printable ASCII, any code point, control characters, grapheme clusters. */
const anyText = (maxLength = 40) =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: 'binary-ascii', maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
  );

/** A valid key of one of the kinds (looked up when generated, after beforeAll issued them). */
const validKey = (kinds: readonly KeyKind[] = KINDS) => fc.constantFrom(...kinds).map((kind) => keys[kind]);

/** Something in the place of a key: a valid one, a mangled one, junk, nothing, or a very long one. */
const keyLike = fc.oneof(
  { weight: 3, arbitrary: validKey() },
  validKey().chain((key) =>
    fc.oneof(
      fc.constant(key.slice(0, -1)),
      fc.constant(key.toUpperCase()),
      fc.constant(`${key}${key}`),
      anyText(4).map((extra) => key + extra),
      anyText(4).map((extra) => extra + key),
    ),
  ),
  fc.constantFrom('', 'null', 'undefined', 'sk_live_', 'sk_test_', 'tr_', '0', '-1', '%00', '\u0000', 'Bearer', '🔑'),
  anyText(),
  fc.integer({ min: 1, max: 20_000 }).map((n) => 'k'.repeat(n)),
);

const space = fc.stringMatching(/^[ \t]{0,3}$/);

/** Authorization header values: Bearer with odd spacing and case, other schemes, junk. */
const authorization = fc.oneof(
  fc.tuple(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'Bearer:', 'Basic', 'Token', ''), space, keyLike, space, fc.option(anyText(8), { nil: '' })).map(
    ([scheme, before, key, after, tail]) => `${scheme}${before}${key}${after}${tail}`,
  ),
  fc.constantFrom('Bearer', 'Bearer ', 'Bearer  ', 'Bearer\t', 'Basic dXNlcjpwYXNz', 'Bearer a b', 'Bearer ,', ', Bearer x'),
  anyText(),
);

/** A query string: known parameter names and junk ones, odd values, encoded or raw, repeated. */
const queryString = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom('api_key', 'api_key[]', 'api_key[0]', 'api_key[a]', 'limit', 'status', 'search', 'after', 'id', '__proto__', 'constructor', ''),
        anyText(10),
      ),
      fc.oneof(
        keyLike,
        fc.constantFrom('', '0', '-1', '101', '1e3', '2147483648', 'NaN', 'ACTIVE', 'LAPSED', 'active', 'true', 'null', '%', '%zz', '%00', '&', '=', '#'),
        anyText(),
      ),
      fc.boolean(),
    ),
    { maxLength: 5 },
  )
  .map((pairs) =>
    pairs
      .map(([name, value, raw]) => (raw ? `${name}=${value}` : `${encode(name)}=${encode(value)}`))
      .join('&'),
  );

/** One path segment: a word the routes know, an encoded random one, or a troublesome one. */
const segment = fc.oneof(
  fc.constantFrom('members', 'jobs', 'renew', 'traces', 'export', 'stats', 'v1', 'chat', 'completions', 'models', 'sdapi', 'txt2img', 'api', 'analytics'),
  fc.uuid(),
  fc.webSegment(),
  anyText(12).map(encode),
  fc.constantFrom('', '.', '..', '%', '%zz', '%00', '%2F', '%2e%2e', '%E0%A4%A', '%C0%AF', ';a=b', '~', 'openapi.json', 'docs', '__proto__', 'constructor', 'x'.repeat(3000)),
);

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; charset=bogus',
      'APPLICATION/JSON',
      'application/json;;;',
      'text/plain',
      'text/html',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'multipart/form-data',
      'application/graphql',
      'application/graphql-response+json',
      'application/octet-stream',
      '*/*',
      '',
    ),
    anyText(20),
  ),
  { nil: undefined },
);

const contentEncoding = fc.option(fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'bogus', 'gzip, gzip'), { nil: undefined, freq: 8 });

/** A JSON value, sometimes with a field set to something odd. */
const fieldValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  anyText(),
  fc.constantFrom('Ada Lovelace', 'ada@example.org', 'not-an-email', '2024-01-01', '2024-13-45', '', ' ', '+44 20 7946 0000', 'x'.repeat(10_000)),
  fc.constantFrom(null, true, 0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2),
);

/** Bodies anyone might send: JSON of any shape, text, bytes, and pathological JSON. */
const genericBody = fc.oneof(
  fc.json({ maxDepth: 3 }),
  anyText(200),
  fc.uint8Array({ maxLength: 512 }).map((bytes) => new Uint8Array(bytes)),
  fc.constantFrom(
    '',
    '{',
    '{"name":',
    'null',
    '[]',
    '"x"',
    '1',
    '\uFEFF{}',
    '{"__proto__": {"polluted": true}}',
    '{"constructor": {"prototype": {"polluted": true}}}',
    `${'['.repeat(50_000)}${']'.repeat(50_000)}`,
    `{"name": ${'['.repeat(5_000)}${']'.repeat(5_000)}}`,
    `{"name": "${'x'.repeat(1_100_000)}"}`,
    '{"name": 1e999999}',
    '{"name": "\\ud800"}',
  ),
);

const memberBody = fc
  .record({ name: fieldValue, email: fieldValue, phone: fieldValue, joinedOn: fieldValue, id: fieldValue, livemode: fieldValue }, { requiredKeys: [] })
  .map((body) => JSON.stringify(body));

const QUERIES = [
  '{ __typename }',
  '{ members { data { id name } } }',
  'query($id: ID!) { member(id: $id) { id name } }',
  'mutation($name: String!, $email: String!) { createMember(input: { name: $name, email: $email }) { id } }',
  'subscription { x }',
  '{ members(limit: -1) { data { id } } }',
  '{',
  '',
  'query A { __typename } query B { __typename }',
  '{ __schema { types { name } } }',
  `{ ${'a: __typename '.repeat(200)} }`,
];

const graphqlBody = fc
  .record(
    {
      query: fc.oneof(fc.constantFrom(...QUERIES), anyText(60), fc.jsonValue({ maxDepth: 1 })),
      variables: fc.oneof(fc.dictionary(fc.constantFrom('id', 'name', 'email', 'x'), fieldValue), fc.jsonValue({ maxDepth: 2 }), anyText()),
      operationName: fc.oneof(fc.constantFrom('A', 'B', 'Missing'), fc.jsonValue({ maxDepth: 1 })),
      extensions: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  )
  .map((body) => JSON.stringify(body));

const chatBody = fc
  .record(
    {
      model: fieldValue,
      messages: fc.oneof(fc.array(fc.record({ role: fieldValue, content: fieldValue }, { requiredKeys: [] }), { maxLength: 3 }), fieldValue),
      stream: fieldValue,
      max_tokens: fieldValue,
      temperature: fieldValue,
    },
    { requiredKeys: [] },
  )
  .map((body) => JSON.stringify(body));

/** Headers every request may carry: a client's request id and an idempotency key, each any text. */
const extraHeaders = fc.record(
  { 'x-request-id': fc.oneof(anyText(), fc.stringMatching(/^[\w.:-]{1,128}$/), fc.constant('r'.repeat(129))), 'idempotency-key': fc.oneof(anyText(), fc.uuid()) },
  { requiredKeys: [] },
);

// ---- sending and checking ----------------------------------------------------------------------

function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    // A lone surrogate cannot be encoded; send it as the replacement character would be.
    return encodeURIComponent(text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
  }
}

/**
 * Whether fetch can send these headers at all: Headers refuses characters above U+00FF, CR, LF
 * and NUL, and undici refuses any other control character but tab when it writes the request.
 */
function sendable(headers: Record<string, string>): boolean {
  try {
    return [...new Headers(headers).values()].every((value) => !/[^\t\x20-\x7e\x80-\xff]/.test(value));
  } catch {
    return false;
  }
}

interface Attempt {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer>;
}

const textOf = (body: string | Uint8Array) => (typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));

const describeAttempt = ({ method, path, headers, body }: Attempt) =>
  JSON.stringify({ method, path: path.slice(0, 300), headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.slice(0, 200)])), body: body === undefined ? undefined : textOf(body).slice(0, 200) });

/**
 * Sends `attempt` and checks what every answer must be: below 500, JSON that parses when it says
 * JSON, the interface's error body on a client error, and the request id rule.
 */
async function check(attempt: Attempt): Promise<void> {
  fc.pre(sendable(attempt.headers));
  const { method, path, headers, body } = attempt;
  const url = platform.baseUrl + path;
  const response = await fetch(url, {
    method,
    headers,
    body: method === 'GET' || method === 'HEAD' ? undefined : body,
  });
  const text = await response.text();
  const what = `${describeAttempt(attempt)}\n→ ${response.status} ${text.slice(0, 300)}`;
  expect(response.status, what).toBeLessThan(500);

  const type = response.headers.get('content-type') ?? '';
  if (method === 'HEAD' || !/json/i.test(type)) return;
  let parsed: any;
  expect(() => (parsed = JSON.parse(text)), what).not.toThrow();

  if (response.status >= 400) {
    switch (mountOf(url)) {
      case 'membership':
        expect(typeof parsed.error?.code, what).toBe('string');
        expect(typeof parsed.error?.type, what).toBe('string');
        expect(parsed.error.request_id, what).toBe(response.headers.get('x-request-id'));
        break;
      case 'traceroute':
        expect(typeof parsed.error, what).toBe('string');
        break;
      case 'inference':
        expect(typeof parsed.error?.message, what).toBe('string');
        expect(typeof parsed.error?.type, what).toBe('string');
        break;
      case 'graphql':
        expect(Array.isArray(parsed.errors), what).toBe(true);
        expect(typeof parsed.errors[0]?.message, what).toBe('string');
        break;
    }
  }

  // A client's own request id is kept when it is a plain token; anything else gets a fresh one.
  const given = headers['x-request-id']?.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  const answered = response.headers.get('x-request-id');
  if (given !== undefined && answered) {
    if (/^[\w.:-]{1,128}$/.test(given)) expect(answered, what).toBe(given);
    else expect(answered, what).toMatch(/^req_[0-9a-f-]{36}$/);
  }
}

// Kept small enough for the file to run in well under 20 s; FAST_CHECK_RUNS raises it locally.
const runs = (n: number) => ({ numRuns: Number(process.env.FAST_CHECK_RUNS ?? n) });

// Inputs the properties found answering 500, each pinned to the answer it has had since.
describe('inputs that once answered 500', () => {
  const answer = async (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const response = await platform.request(path, { key: keys.live, ...init });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('a trailing slash on a REST path is the path without it', async () => {
    const { status, body } = await answer('/api/v1/members/');
    expect(status).toBe(200);
    expect(Array.isArray(body.data)).toBe(true);
  });

  it('a method other than GET on a documentation path is 405 method_not_allowed', async () => {
    const { status, body } = await answer('/api/v1/openapi.json', { method: 'POST' });
    expect(status).toBe(405);
    expect(body.error.code).toBe('method_not_allowed');
  });

  it('a NUL character in a search or a field is 400 invalid_parameter naming it', async () => {
    const search = await answer('/api/v1/members?search=%00');
    expect(search.status).toBe(400);
    expect(search.body.error).toMatchObject({ code: 'invalid_parameter', param: 'search' });
    const created = await answer('/api/v1/members', { method: 'POST', json: { name: 'a\u0000b', email: 'nul@example.org' } });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ code: 'invalid_parameter', param: 'name' });
  });

  it('a GraphQL document without the operation named is 400 OPERATION_RESOLUTION_FAILURE', async () => {
    for (const json of [
      { query: '{ __typename }', operationName: 'A' },
      { query: 'query A { __typename } query B { __typename }' },
    ]) {
      const { status, body } = await answer('/graphql', { method: 'POST', json });
      expect(status).toBe(400);
      expect(body.errors[0].extensions.code).toBe('OPERATION_RESOLUTION_FAILURE');
    }
  });
});

describe('malformed input at the edge', () => {
  it('answers any credential in any place with a client error or success, never 500', async () => {
    const targets = ['/api/v1/members', '/v1/public/traces', '/inference/text/v1/models', '/inference/image/sdapi/v1/sd-models', '/inference/proxy/v1/models', '/inference/gateway/v1/models', '/graphql'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...targets),
        fc.option(authorization, { nil: undefined }),
        fc.option(keyLike, { nil: undefined }),
        fc.option(keyLike.map(encode), { nil: undefined }),
        extraHeaders,
        async (target, auth, apiKey, queryKey, extra) => {
          const headers: Record<string, string> = { ...extra };
          if (auth !== undefined) headers.authorization = auth;
          if (apiKey !== undefined) headers['x-api-key'] = apiKey;
          const path = queryKey !== undefined ? `${target}?api_key=${queryKey}` : target;
          if (target === '/graphql') {
            await check({ method: 'POST', path, headers: { ...headers, 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
          } else {
            await check({ method: 'GET', path, headers });
          }
        },
      ),
      runs(250),
    );
  });

  it('answers any query string on the list endpoints with 200 or a parameter error, never 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/api/v1/members', '/v1/public/traces', '/api/v1/jobs'), queryString, fc.boolean(), extraHeaders, async (target, query, keyed, extra) => {
        const headers: Record<string, string> = { ...extra };
        if (keyed) {
          if (target === '/v1/public/traces') headers['x-api-key'] = keys.traceroute;
          else headers.authorization = `Bearer ${keys.live}`;
        }
        await check({ method: 'GET', path: `${target}?${query}`, headers });
      }),
      runs(150),
    );
  });

  it('answers any body with any content type on the write endpoints with a client error or success, never 500', async () => {
    const targets = {
      '/api/v1/members': { kinds: ['live', 'test'] as KeyKind[], shaped: memberBody },
      '/graphql': { kinds: KINDS, shaped: graphqlBody },
      '/inference/text/v1/chat/completions': { kinds: ['text'] as KeyKind[], shaped: chatBody },
    };
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...(Object.keys(targets) as (keyof typeof targets)[])).chain((path) =>
          fc.record({
            path: fc.constant(path),
            key: fc.oneof({ weight: 4, arbitrary: validKey(targets[path].kinds) }, { weight: 1, arbitrary: keyLike }),
            body: fc.oneof(targets[path].shaped, genericBody),
            type: contentType,
            encoding: contentEncoding,
            extra: extraHeaders,
          }),
        ),
        async ({ path, key, body, type, encoding, extra }) => {
          const headers: Record<string, string> = { ...extra, authorization: `Bearer ${key}` };
          if (type !== undefined) headers['content-type'] = type;
          if (encoding !== undefined) headers['content-encoding'] = encoding;
          await check({ method: 'POST', path, headers, body });
        },
      ),
      runs(250),
    );
  });

  it('answers any method on any path under every mount with a client error or success, never 500', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...MOUNTS).chain((mount) =>
          fc.record({
            mount: fc.constant(mount),
            key: mount.kinds.length ? fc.oneof({ weight: 3, arbitrary: validKey(mount.kinds) }, { weight: 1, arbitrary: keyLike }) : fc.option(keyLike, { nil: undefined }),
            segments: fc.array(segment, { maxLength: 4 }),
            trailingSlash: fc.boolean(),
            query: fc.option(queryString, { nil: undefined, freq: 3 }),
            method: fc.constantFrom(...METHODS),
            body: fc.option(fc.oneof(genericBody, memberBody), { nil: undefined }),
            type: contentType,
            extra: extraHeaders,
          }),
        ),
        async ({ mount, key, segments, trailingSlash, query, method, body, type, extra }) => {
          const headers: Record<string, string> = { ...extra };
          if (key !== undefined) {
            if (mount.mount === 'traceroute') headers['x-api-key'] = key;
            else headers.authorization = `Bearer ${key}`;
          }
          if (type !== undefined) headers['content-type'] = type;
          const path = `${mount.base}/${segments.join('/')}${trailingSlash ? '/' : ''}${query !== undefined ? `?${query}` : ''}`;
          await check({ method, path, headers, body });
        },
      ),
      runs(300),
    );
  });

  it('still answers /health with 200 after all of it', async () => {
    const response = await platform.request('/health');
    expect(response.status).toBe(200);
  });
});
