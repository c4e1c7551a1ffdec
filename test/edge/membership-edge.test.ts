import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';

const LIVE = 10;
const TEST = 25;
let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform({
    rateLimits: { ...testConfig().rateLimits, livePerMinute: LIVE, testPerMinute: TEST, anonymousPerMinute: 40 },
  });
});
afterAll(async () => {
  await platform?.close();
});

let accounts = 0;
const account = () => `mem-edge-${++accounts}`;

function limitHeaders(response: Response) {
  return {
    limit: Number(response.headers.get('x-ratelimit-limit')),
    remaining: Number(response.headers.get('x-ratelimit-remaining')),
    reset: Number(response.headers.get('x-ratelimit-reset')),
  };
}

const graphql = (key: string | undefined, query: string) => platform.request('/graphql', { method: 'POST', key, json: { query } });

describe('membership rate limits', () => {
  it('puts X-RateLimit-* on every response, errors included; Reset is the epoch second the window ends', async () => {
    const key = await platform.issueKey(account());
    const responses = [
      await platform.request('/api/v1/members', { key }),
      await platform.request('/api/v1/members/00000000-0000-4000-8000-000000000000', { key }),
      await platform.request('/api/v1/members', { method: 'POST', key, json: { name: '' } }),
      await platform.request('/api/v1/members'),
      await graphql(key, '{ members { data { id } } }'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 404, 400, 401, 200]);
    const now = Date.now() / 1000;
    for (const response of responses) {
      const headers = limitHeaders(response);
      expect(headers.limit).toBeGreaterThan(0);
      expect(headers.reset).toBeGreaterThan(now);
      expect(headers.reset).toBeLessThanOrEqual(Math.ceil(now) + 60);
    }
    // The key's own requests count down one window across REST and GraphQL: 4 of them here.
    expect([0, 1, 2, 4].map((i) => limitHeaders(responses[i]).remaining)).toEqual([LIVE - 1, LIVE - 2, LIVE - 3, LIVE - 4]);
  });

  it('refuses a live key past its per-minute limit with 429, Retry-After and the error body', async () => {
    const key = await platform.issueKey(account());
    for (let i = 0; i < LIVE; i++) expect((await platform.request('/api/v1/members', { key })).status).toBe(200);
    const refused = await platform.request('/api/v1/members', { key });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limitHeaders(refused)).toMatchObject({ limit: LIVE, remaining: 0 });
    const body = (await refused.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });
    expect(body.error.request_id).toBe(refused.headers.get('x-request-id'));
  });

  it('counts REST and GraphQL requests of one key in one window, and refuses GraphQL with RATE_LIMITED', async () => {
    const key = await platform.issueKey(account());
    for (let i = 0; i < LIVE / 2; i++) {
      expect((await platform.request('/api/v1/members', { key })).status).toBe(200);
      expect((await graphql(key, '{ members { data { id } } }')).status).toBe(200);
    }
    const refused = await graphql(key, '{ members { data { id } } }');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    const body = (await refused.json()) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', reason: 'rate_limit_exceeded' });
    expect((await platform.request('/api/v1/members', { key })).status).toBe(429);
  });

  it('admits exactly the limit under many concurrent requests', async () => {
    const key = await platform.issueKey(account());
    const statuses = await Promise.all(
      Array.from({ length: LIVE * 4 }, () => platform.request('/api/v1/members', { key }).then(async (r) => (await r.arrayBuffer(), r.status))),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(LIVE);
    expect(statuses.filter((s) => s === 429)).toHaveLength(LIVE * 3);
  });

  it('gives test keys their own, larger window: a live key at its limit does not limit a test key', async () => {
    const slug = account();
    const live = await platform.issueKey(slug, 'live');
    const test = await platform.issueKey(slug, 'test');
    for (let i = 0; i < LIVE; i++) await (await platform.request('/api/v1/members', { key: live })).arrayBuffer();
    expect((await platform.request('/api/v1/members', { key: live })).status).toBe(429);
    const fromTest = await platform.request('/api/v1/members', { key: test });
    expect(fromTest.status).toBe(200);
    expect(limitHeaders(fromTest)).toMatchObject({ limit: TEST, remaining: TEST - 1 });
  });

  it('limits requests without a valid key per client address, so keys cannot be guessed at speed', async () => {
    const own = await startTestPlatform({ rateLimits: { ...testConfig().rateLimits, anonymousPerMinute: 3 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await own.request('/api/v1/members', { key: `sk_live_guess${i}` })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
    } finally {
      await own.close();
    }
  });
});

describe('membership key refusals over REST and GraphQL', () => {
  it('names each refusal: missing, unknown, disabled, expired, wrong kind', async () => {
    const slug = account();
    const disabled = await platform.issueKey(slug, 'live');
    const expired = await platform.issueKey(slug, 'test');
    const traceroute = await platform.issueKey(slug, 'traceroute');
    const keys = await platform.identity().listKeys({ account: slug });
    await platform.identity().disableKey(keys.find((k) => k.kind === 'live')!.id);
    await platform.identity().expireKey(keys.find((k) => k.kind === 'test')!.id, new Date(Date.now() - 1000));
    const cases: [string | undefined, number, string][] = [
      [undefined, 401, 'missing_api_key'],
      ['sk_live_unknown', 401, 'invalid_api_key'],
      [disabled, 401, 'api_key_disabled'],
      [expired, 401, 'api_key_expired'],
      [traceroute, 403, 'wrong_key_kind'],
    ];
    for (const [key, status, code] of cases) {
      const rest = await platform.request('/api/v1/members', { key });
      expect(rest.status, code).toBe(status);
      expect(((await rest.json()) as { error: { code: string; type: string } }).error).toMatchObject({
        code,
        type: status === 401 ? 'authentication_error' : 'permission_error',
      });
    }
    // Over GraphQL every kind of key is let in; the subgraphs decide what each kind may see.
    for (const [key, status, code] of cases.slice(0, 4)) {
      const response = await graphql(key, '{ members { data { id } } }');
      expect(response.status, code).toBe(status);
      expect(((await response.json()) as { errors: { extensions: unknown }[] }).errors[0].extensions).toMatchObject({
        code: 'UNAUTHENTICATED',
        reason: code,
      });
    }
    const wrongKind = (await (await graphql(traceroute, '{ members { data { id } } }')).json()) as { errors: { extensions: unknown }[] };
    expect(wrongKind.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN' });
  });
});
