import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(async () => {
  await platform?.close();
});

let accounts = 0;
const account = () => `tr-${++accounts}`;

async function errorOf(response: Response, status: number, name: string) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { error: string; message: string; request_id: string };
  expect(body.error).toBe(name);
  expect(body.message.length).toBeGreaterThan(0);
  expect(body.request_id).toBe(response.headers.get('x-request-id'));
  return body;
}

describe('traceroute public API keys', () => {
  it('accepts the key in the X-API-Key header or the api_key query parameter', async () => {
    const key = await platform.issueKey(account(), 'traceroute');
    const byHeader = await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } });
    expect(byHeader.status).toBe(200);
    expect(await byHeader.json()).toMatchObject({ data: [], hasMore: false });
    const byQuery = await platform.request(`/v1/public/traces?api_key=${encodeURIComponent(key)}`);
    expect(byQuery.status).toBe(200);
  });

  it('answers 401 api_key_required without a key (an Authorization header is not its key)', async () => {
    await errorOf(await platform.request('/v1/public/traces'), 401, 'api_key_required');
    const key = await platform.issueKey(account(), 'traceroute');
    await errorOf(await platform.request('/v1/public/traces', { key }), 401, 'api_key_required');
  });

  it('answers 403 invalid_key for an unknown key, and for a key of another interface', async () => {
    await errorOf(await platform.request('/v1/public/traces', { headers: { 'x-api-key': 'trk_unknown' } }), 403, 'invalid_key');
    const live = await platform.issueKey(account(), 'live');
    await errorOf(await platform.request('/v1/public/traces', { headers: { 'x-api-key': live } }), 403, 'invalid_key');
  });

  it('answers 403 key_disabled for a deactivated key, and serves it again once re-enabled', async () => {
    const slug = account();
    const key = await platform.issueKey(slug, 'traceroute');
    const [issued] = await platform.identity().listKeys({ account: slug });
    await platform.identity().disableKey(issued.id);
    await errorOf(await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } }), 403, 'key_disabled');
    await platform.identity().enableKey(issued.id);
    expect((await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } })).status).toBe(200);
  });

  it('answers 403 key_expired past the expiry date', async () => {
    const slug = account();
    const key = await platform.issueKey(slug, 'traceroute');
    const [issued] = await platform.identity().listKeys({ account: slug });
    await platform.identity().expireKey(issued.id, new Date(Date.now() - 1000));
    await errorOf(await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } }), 403, 'key_expired');
  });

  it('answers 429 rate_limit_hourly past the hourly limit, with Retry-After and the limit headers', async () => {
    const key = await platform.issueKey(account(), 'traceroute', { hourlyLimit: 3, dailyLimit: 100 });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 4; i++) {
      last = await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } });
      statuses.push(last.status);
      if (i < 3) await last.arrayBuffer();
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
    const retryAfter = Number(last!.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(last!.headers.get('x-ratelimit-limit')).toBe('3');
    expect(last!.headers.get('x-ratelimit-remaining')).toBe('0');
    await errorOf(last!, 429, 'rate_limit_hourly');
  });

  it('answers 429 rate_limit_daily once the day is used up, even with hours to spare', async () => {
    const key = await platform.issueKey(account(), 'traceroute', { hourlyLimit: 50, dailyLimit: 2 });
    for (let i = 0; i < 2; i++) expect((await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } })).status).toBe(200);
    const refused = await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3600);
    await errorOf(refused, 429, 'rate_limit_daily');
  });

  it('gives a default key 100 an hour and 2,000 a day, shown in the headers', async () => {
    const key = await platform.issueKey(account(), 'traceroute');
    const response = await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } });
    expect(response.headers.get('x-ratelimit-limit')).toBe('100');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('99');
    const reset = Number(response.headers.get('x-ratelimit-reset'));
    const now = Date.now() / 1000;
    expect(reset).toBeGreaterThan(now + 3590);
    expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 3600);
  });

  it('answers 404 not_found for an unknown or malformed trace id', async () => {
    const key = await platform.issueKey(account(), 'traceroute');
    await errorOf(
      await platform.request('/v1/public/traces/00000000-0000-4000-8000-000000000000', { headers: { 'x-api-key': key } }),
      404,
      'not_found',
    );
    await errorOf(await platform.request('/v1/public/traces/not-a-uuid', { headers: { 'x-api-key': key } }), 404, 'not_found');
  });
});

describe('traceroute paths outside the specification', () => {
  it('answer 404 not_found in the traceroute body', async () => {
    const key = await platform.issueKey(account(), 'traceroute');
    await errorOf(await platform.request('/v1/public/nothing', { headers: { 'x-api-key': key } }), 404, 'not_found');
  });
});
