import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(async () => {
  await platform?.close();
});

let accountCounter = 0;
const freshKey = () => platform.issueKey(`finance-bounds-${++accountCounter}`);
const post = (key: string, path: string, json: unknown, headers: Record<string, string> = {}) =>
  platform.request(`/api/v1${path}`, { method: 'POST', key, json, headers });
const get = (key: string, path: string) => platform.request(`/api/v1${path}`, { key });

async function body<T = any>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function graphql(key: string, query: string, variables: Record<string, unknown> = {}) {
  return body(await platform.request('/graphql', { method: 'POST', key, json: { query, variables } }), 200);
}

async function newMember(key: string): Promise<string> {
  return (await body(await post(key, '/members', { name: 'Ada', email: `ada.${Math.random()}@example.org` }), 201)).id;
}

const INVOICES = 'query ($memberId: ID) { invoices(memberId: $memberId) { data { id total lines { quantity unitAmount amount } } } }';

describe('invoice amounts the API cannot represent', () => {
  it('refuses a line whose quantity × unit amount is beyond what an invoice holds, before storing anything', async () => {
    const key = await freshKey();
    const memberId = await newMember(key);
    const crafted = {
      memberId,
      currency: 'EUR',
      lines: [
        { description: 'a lot', quantity: 1_000_000, unitAmount: 100_000_000 },
        { description: 'taken back', quantity: 1_000_000, unitAmount: -100_000_000 },
      ],
    };
    const refused = await body(await post(key, '/invoices', crafted, { 'idempotency-key': 'crafted-1' }), 400);
    expect(refused.error).toMatchObject({ code: 'invalid_parameter', param: 'lines.0.unitAmount' });
    expect((await body(await get(key, `/invoices?memberId=${memberId}`), 200)).data).toEqual([]);
    // The 400 is kept with the key: a retry answers the same and stores nothing either.
    await body(await post(key, '/invoices', crafted, { 'idempotency-key': 'crafted-1' }), 400);
    const listed = await graphql(key, INVOICES, { memberId });
    expect(listed.errors).toBeUndefined();
    expect(listed.data.invoices.data).toEqual([]);
  });

  it('still lists a member whose stored invoice carries a line amount beyond 32 bits', async () => {
    const key = await freshKey();
    const memberId = await newMember(key);
    const created = await body(await post(key, '/invoices', { memberId, currency: 'EUR', lines: [{ description: 'x', quantity: 2, unitAmount: 500 }] }), 201);
    // As the unchecked API stored them before: lines adding up to a small total, each huge.
    const client = new pg.Client({ connectionString: platform.databaseUrl });
    await client.connect();
    try {
      await client.query(`update "membership"."invoice" set "lines" = $1 where "id" = $2`, [
        JSON.stringify([
          { description: 'a lot', quantity: 1_000_000, unitAmount: 100_000_000, amount: 100_000_000_000_000 },
          { description: 'taken back', quantity: 1_000_000, unitAmount: -99_999_999, amount: -99_999_999_000_000 },
        ]),
        created.id,
      ]);
    } finally {
      await client.end();
    }
    const listed = await body(await get(key, `/invoices?memberId=${memberId}`), 200);
    expect(listed.data[0].lines.map((line: { amount: number }) => line.amount)).toEqual([100_000_000_000_000, -99_999_999_000_000]);
    const overGraphQL = await graphql(key, INVOICES, { memberId });
    expect(overGraphQL.errors).toBeUndefined();
    expect(overGraphQL.data.invoices.data[0].lines[0].amount).toBe(100_000_000_000_000);
  });
});
