import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

const PASSWORD = 'correct horse battery';
let platform: TestPlatform;
// Every attempt of this file comes from 127.0.0.1: it counts them all against the default 20.
let attempts = 0;

beforeAll(async () => {
  platform = await startTestPlatform();
  await platform.createDashboardUser({ account: 'acme', email: 'target@example.com', password: PASSWORD });
  await platform.createDashboardUser({ account: 'acme', email: 'other@example.com', password: PASSWORD });
});
afterAll(async () => {
  await platform?.close();
});

async function attempt(email: string, password: string) {
  attempts += 1;
  const res = await platform.request('/dashboard/api/session', { method: 'POST', json: { email, password } });
  const body = (await res.json()) as { error?: { code: string } };
  return { status: res.status, code: body.error?.code, retryAfter: res.headers.get('retry-after') };
}

describe('sign-in attempts are limited (defaults: 5 failures per email, 20 attempts per address, per 15 minutes)', () => {
  it('after 5 failures for one email, even the right password is refused with 429 and Retry-After; other emails still sign in', async () => {
    for (let i = 0; i < 5; i++) expect((await attempt('Target@example.com', `wrong ${i}`)).code).toBe('invalid_credentials');
    const limited = await attempt('target@example.com', PASSWORD);
    expect(limited).toMatchObject({ status: 429, code: 'too_many_attempts' });
    expect(Number(limited.retryAfter)).toBeGreaterThan(800);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(900);
    expect((await attempt('other@example.com', PASSWORD)).status).toBe(200);
  });

  it('after 20 attempts from one address, every email is refused with 429 until the window ends', async () => {
    // Unknown emails, one each: no email reaches its own limit, only the address does.
    while (attempts < 20) expect((await attempt(`nobody${attempts}@example.com`, 'guess')).status).toBe(401);
    const limited = await attempt('other@example.com', PASSWORD);
    expect(limited).toMatchObject({ status: 429, code: 'too_many_attempts' });
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
  });
});
