import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

// REST parameters as Stripe treats them: nothing unknown is dropped, nothing of the wrong JSON
// type is coerced, and every refusal names the parameter in the interface's words.

let platform: TestPlatform;
let db: pg.Client;
let key: string;
let traceKey: string;
let memberId: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  key = await platform.issueKey('acct-strict');
  traceKey = await platform.issueKey('acct-strict-traces', 'traceroute');
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  const member = await platform.request('/api/v1/members', { method: 'POST', key, json: { name: 'Strict', email: 'strict@example.org' } });
  expect(member.status).toBe(201);
  memberId = ((await member.json()) as { id: string }).id;
});

afterAll(async () => {
  await db?.end();
  await platform?.close();
});

async function members(email: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from "membership"."member" where "email" = $1`, [email]);
  return rows[0].n;
}

async function refusal(response: Response) {
  const body = (await response.json()) as { error: { code: string; param: string | null; message: string; type: string } };
  return { status: response.status, ...body.error };
}

describe('membership REST bodies', () => {
  it('an unknown parameter is 400 unknown_parameter naming it, and nothing is stored', async () => {
    const response = await platform.request('/api/v1/members', { method: 'POST', key, json: { name: 'x', email: 'unknown@example.org', categoryID: 'abc' } });
    expect(await refusal(response)).toMatchObject({ status: 400, code: 'unknown_parameter', param: 'categoryID', type: 'invalid_request_error' });
    expect(await members('unknown@example.org')).toBe(0);
  });

  it('a value of the wrong JSON type is 400 invalid_parameter naming it, never coerced', async () => {
    const named = await platform.request('/api/v1/members', { method: 'POST', key, json: { name: 123, email: 'typed@example.org' } });
    expect(await refusal(named)).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'name', message: expect.stringContaining('must be a string') });
    expect(await members('typed@example.org')).toBe(0);
    const invoice = await platform.request('/api/v1/invoices', {
      method: 'POST',
      key,
      json: { memberId, currency: 'EUR', lines: [{ description: 'Dues', unitAmount: '100' }] },
    });
    expect(await refusal(invoice)).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'lines.0.unitAmount' });
    const listed = await platform.request('/api/v1/invoices', { method: 'POST', key, json: { memberId, currency: 'EUR', lines: { description: 'Dues', unitAmount: 100 } } });
    expect(await refusal(listed)).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'lines' });
  });

  it('an unknown field inside an object is named by its path', async () => {
    const response = await platform.request('/api/v1/invoices', {
      method: 'POST',
      key,
      json: { memberId, currency: 'EUR', lines: [{ description: 'Dues', unitAmount: 100, taxRate: 20 }] },
    });
    expect(await refusal(response)).toMatchObject({ status: 400, code: 'unknown_parameter', param: 'lines.0.taxRate' });
  });

  it('a missing required parameter is 400 missing_parameter naming it', async () => {
    const response = await platform.request('/api/v1/invoices', { method: 'POST', key, json: { memberId, lines: [{ description: 'Dues', unitAmount: 100 }] } });
    expect(await refusal(response)).toMatchObject({ status: 400, code: 'missing_parameter', param: 'currency' });
  });

  it('a body without a JSON content type is 415', async () => {
    const response = await platform.request('/api/v1/members', {
      method: 'POST',
      key,
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify({ name: 'Plain', email: 'plain@example.org' }),
    });
    expect(await refusal(response)).toMatchObject({ status: 415, code: 'unsupported_media_type' });
    expect(await members('plain@example.org')).toBe(0);
  });

  it('the path\'s own parameter is not taken again from the body', async () => {
    const response = await platform.request(`/api/v1/members/${memberId}`, { method: 'PUT', key, json: { id: memberId, name: 'Renamed' } });
    expect(await refusal(response)).toMatchObject({ status: 400, code: 'unknown_parameter', param: 'id' });
  });
});

describe('membership REST query strings', () => {
  it('an unknown query parameter is 400 unknown_parameter', async () => {
    expect(await refusal(await platform.request('/api/v1/members?colour=blue', { key }))).toMatchObject({ status: 400, code: 'unknown_parameter', param: 'colour' });
  });

  it('a whole number past the type\'s range is told the range, not that it is no integer', async () => {
    const tooLarge = await refusal(await platform.request('/api/v1/members?limit=1000000000000', { key }));
    expect(tooLarge).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'limit', message: 'limit must be an integer from -2147483647 to 2147483647, got "1000000000000"' });
    const inBody = await platform.request('/api/v1/events', { method: 'POST', key, json: { title: 'Big', startsAt: '2030-05-01T18:00:00Z', endsAt: '2030-05-01T20:00:00Z', timeZone: 'UTC', capacity: 2 ** 31 } });
    expect(await refusal(inBody)).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'capacity', message: expect.stringContaining('must be an integer from -2147483647 to 2147483647') });
  });

  it('a parameter that is not a list, given twice, is 400 naming it', async () => {
    expect(await refusal(await platform.request('/api/v1/members?limit=1&limit=2', { key }))).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'limit' });
  });

  it('finance reports take format beside their arguments', async () => {
    expect((await platform.request('/api/v1/finance/reports?from=2026-01-01&to=2026-01-31&format=json', { key })).status).toBe(200);
  });
});

describe('traceroute REST query strings', () => {
  it('a parameter the API does not take is 400 naming it in the traceroute error body, not every trace', async () => {
    const response = await platform.request(`/v1/public/traces?measurement=1`, { headers: { 'x-api-key': traceKey } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'unknown_parameter', param: 'measurement' });
  });

  it('the key as api_key is still taken', async () => {
    expect((await platform.request(`/v1/public/traces?api_key=${encodeURIComponent(traceKey)}&limit=1`)).status).toBe(200);
  });
});
