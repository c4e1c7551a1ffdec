import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';

const LIVE = 6;
const TEST = 9;
let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform({ rateLimits: { ...testConfig().rateLimits, livePerMinute: LIVE, testPerMinute: TEST } });
});
afterAll(async () => {
  await platform?.close();
});

let accounts = 0;
const account = () => `acct-limits-${++accounts}`;
const members = (key: string) => platform.request('/api/v1/members', { key });
const remaining = (response: Response) => Number(response.headers.get('x-ratelimit-remaining'));

describe('membership limits per account and mode', () => {
  it('counts every live key of an account in one window, as Stripe does', async () => {
    const slug = account();
    const [first, second] = [await platform.issueKey(slug, 'live'), await platform.issueKey(slug, 'live')];
    const seen: number[] = [];
    for (let i = 0; i < LIVE / 2; i++) {
      for (const key of [first, second]) {
        const response = await members(key);
        expect(response.status).toBe(200);
        expect(Number(response.headers.get('x-ratelimit-limit'))).toBe(LIVE);
        seen.push(remaining(response));
      }
    }
    expect(seen).toEqual([5, 4, 3, 2, 1, 0]);
    for (const key of [first, second]) {
      const refused = await members(key);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).not.toBeNull();
    }
    // Another account, and the same account's test mode, count apart.
    expect((await members(await platform.issueKey(account(), 'live'))).status).toBe(200);
    const test = await members(await platform.issueKey(slug, 'test'));
    expect(test.status).toBe(200);
    expect(remaining(test)).toBe(TEST - 1);
  });

  it('gives a key created over GraphQL no window of its own: it continues its account’s count', async () => {
    const key = await platform.issueKey(account(), 'test');
    const created = await platform.request('/graphql', {
      method: 'POST',
      key,
      json: { query: 'mutation { createApiKey(kind: TEST, name: "more") { secret } }' },
    });
    expect(remaining(created)).toBe(TEST - 1);
    const { data } = (await created.json()) as { data: { createApiKey: { secret: string } } };
    const fromNewKey = await members(data.createApiKey.secret);
    expect(fromNewKey.status).toBe(200);
    expect(remaining(fromNewKey)).toBe(TEST - 2);
  });
});
