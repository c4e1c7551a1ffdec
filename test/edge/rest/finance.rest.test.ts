import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform();
});
afterAll(async () => {
  await platform?.close();
});

const TODAY = new Date().toISOString().slice(0, 10);
let accountCounter = 0;
const freshKey = (kind: 'live' | 'test' = 'live', account = `finance-rest-${++accountCounter}`) => platform.issueKey(account, kind);

async function body<T = any>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function expectError(response: Response, status: number, code: string, param: string | null = null) {
  const parsed = await body<{ error: Record<string, unknown> }>(response, status);
  expect(parsed.error).toMatchObject({ code, param });
  expect(parsed.error.request_id).toBe(response.headers.get('x-request-id'));
}

const post = (key: string, path: string, json: unknown, headers: Record<string, string> = {}) => platform.request(`/api/v1${path}`, { method: 'POST', key, json, headers });
const get = (key: string, path: string) => platform.request(`/api/v1${path}`, { key });

async function graphql(key: string, query: string, variables: Record<string, unknown> = {}) {
  return body(await platform.request('/graphql', { method: 'POST', key, json: { query, variables } }), 200);
}

async function member(key: string, json: Record<string, unknown> = {}) {
  return body(await post(key, '/members', { name: 'Ada', email: `ada.${Math.random()}@example.org`, ...json }), 201);
}

describe('members over REST with categories and the lifecycle', () => {
  it('creates a member in a paid category as PENDING; renewing a pending member is 409 illegal_transition', async () => {
    const key = await freshKey();
    const category = (await graphql(key, 'mutation { createMemberCategory(name: "Regular", feeAmount: 6000, currency: "EUR", period: YEARLY, graceDays: 14) { id } }')).data.createMemberCategory;
    const created = await member(key, { categoryId: category.id, country: 'de', customFields: { chapter: 'Berlin' } });
    expect(created).toMatchObject({ status: 'PENDING', categoryId: category.id, country: 'DE', customFields: { chapter: 'Berlin' }, periodStart: TODAY });
    await expectError(await post(key, `/members/${created.id}/renew`, {}), 409, 'illegal_transition');
    const invoices = await body(await get(key, `/invoices?memberId=${created.id}`), 200);
    expect(invoices.data).toEqual([expect.objectContaining({ kind: 'MEMBERSHIP', status: 'OPEN', total: 6000, number: 'INV-000001', lines: [expect.objectContaining({ amount: 6000 })] })]);
    const payment = await body(await post(key, '/payments', { invoiceId: invoices.data[0].id, amount: 6000, method: 'CARD' }), 201);
    expect(payment).toMatchObject({ amount: 6000, currency: 'EUR', livemode: true });
    expect((await body(await get(key, `/members/${created.id}`), 200)).status).toBe('ACTIVE');
    // A period of a year that ends a year from today is not due for renewal yet.
    await expectError(await post(key, `/members/${created.id}/renew`, {}), 409, 'renewal_not_due');
    expect((await body(await get(key, `/invoices?memberId=${created.id}&status=OPEN`), 200)).data).toEqual([]);
  });

  it('filters and sorts GET /members, and refuses a page over 100', async () => {
    const key = await freshKey();
    const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
    const b = await member(key, { name: 'Bravo', joinedOn: daysAgo(20) });
    const a = await member(key, { name: 'Alpha', joinedOn: daysAgo(10) });
    await member(key, { name: 'Charlie', joinedOn: daysAgo(40) });
    await member(key, { name: 'Aaron', joinedOn: daysAgo(400) });
    const page = await body(await get(key, `/members?status=ACTIVE&joinedFrom=${daysAgo(30)}&sort=NAME_ASC&limit=1`), 200);
    expect(page.data.map((x: { id: string }) => x.id)).toEqual([a.id]);
    const next = await body(await get(key, `/members?status=ACTIVE&joinedFrom=${daysAgo(30)}&sort=NAME_ASC&limit=1&after=${encodeURIComponent(page.nextCursor)}`), 200);
    expect(next).toMatchObject({ data: [expect.objectContaining({ id: b.id })], hasMore: false });
    await expectError(await get(key, '/members?limit=101'), 400, 'invalid_parameter', 'limit');
    await expectError(await get(key, '/members?status=SLEEPING'), 400, 'invalid_parameter', 'status');
  });
});

describe('finance routes', () => {
  it('POST /invoices, GET /invoices with filters, POST /payments and POST /refunds with their errors', async () => {
    const key = await freshKey();
    const m = await member(key);
    const invoice = await body(await post(key, '/invoices', { memberId: m.id, currency: 'usd', lines: [{ description: 'Dues', quantity: 2, unitAmount: 2500 }] }), 201);
    expect(invoice).toMatchObject({ number: 'INV-000001', status: 'OPEN', currency: 'USD', total: 5000, amountRemaining: 5000, livemode: true });
    const draft = await body(await post(key, '/invoices', { memberId: m.id, currency: 'USD', lines: [{ description: 'Later', unitAmount: 100 }], status: 'DRAFT' }), 201);
    expect(draft).toMatchObject({ number: null, status: 'DRAFT' });
    expect((await body(await get(key, '/invoices?status=DRAFT'), 200)).data.map((i: { id: string }) => i.id)).toEqual([draft.id]);
    expect((await body(await get(key, `/invoices?issuedFrom=${TODAY}&issuedTo=${TODAY}`), 200)).data.map((i: { id: string }) => i.id)).toEqual([invoice.id]);

    await expectError(await post(key, '/payments', { invoiceId: invoice.id, amount: 5001, method: 'CARD' }), 400, 'amount_too_large', 'amount');
    await expectError(await post(key, '/payments', { invoiceId: draft.id, amount: 1, method: 'CARD' }), 409, 'invoice_not_payable', 'invoiceId');
    await expectError(await post(key, '/payments', { invoiceId: '00000000-0000-4000-8000-ffffffffffff', amount: 1, method: 'CARD' }), 404, 'invoice_not_found', 'invoiceId');
    await expectError(await post(key, '/invoices', { memberId: m.id, currency: 'USD', lines: [] }), 400, 'invalid_parameter', 'lines');
    const payment = await body(await post(key, '/payments', { invoiceId: invoice.id, amount: 5000, method: 'BANK_TRANSFER', reference: 'TX-1' }), 201);
    expect(payment).toMatchObject({ amount: 5000, amountRefundable: 5000, invoice: { id: invoice.id } });
    await expectError(await post(key, '/refunds', { paymentId: payment.id, amount: 6000 }), 400, 'amount_too_large', 'amount');
    const refund = await body(await post(key, '/refunds', { paymentId: payment.id, amount: 1500, reason: 'Duplicate' }), 201);
    expect(refund).toMatchObject({ amount: 1500, paymentId: payment.id, invoiceId: invoice.id, currency: 'USD' });
    expect((await body(await get(key, '/invoices?status=OPEN'), 200)).data).toEqual([expect.objectContaining({ id: invoice.id, amountRemaining: 1500 })]);
    await expectError(await post(key, '/refunds', { paymentId: 'nope' }), 404, 'payment_not_found', 'paymentId');
  });

  it('keeps test-mode money apart from live-mode money', async () => {
    const account = `finance-modes-${++accountCounter}`;
    const live = await freshKey('live', account);
    const test = await freshKey('test', account);
    const m = await member(test);
    const invoice = await body(await post(test, '/invoices', { memberId: m.id, currency: 'EUR', lines: [{ description: 'Sandbox', unitAmount: 100 }] }), 201);
    expect(invoice.livemode).toBe(false);
    expect((await body(await get(live, '/invoices'), 200)).data).toEqual([]);
    await expectError(await post(live, '/payments', { invoiceId: invoice.id, amount: 100, method: 'CASH' }), 404, 'invoice_not_found', 'invoiceId');
  });

  it('replays a payment sent twice with one Idempotency-Key instead of paying twice', async () => {
    const key = await freshKey();
    const m = await member(key);
    const invoice = await body(await post(key, '/invoices', { memberId: m.id, currency: 'EUR', lines: [{ description: 'Dues', unitAmount: 1000 }] }), 201);
    const json = { invoiceId: invoice.id, amount: 600, method: 'CARD' };
    const first = await body(await post(key, '/payments', json, { 'idempotency-key': 'pay-once' }), 201);
    const again = await post(key, '/payments', json, { 'idempotency-key': 'pay-once' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await body(again, 201)).toEqual(first);
    expect((await body(await get(key, '/invoices'), 200)).data[0]).toMatchObject({ amountPaid: 600, amountRemaining: 400 });
  });

  it('GET /finance/reports answers JSON, and CSV with ?format=csv', async () => {
    const key = await freshKey();
    const m = await member(key);
    const invoice = await body(await post(key, '/invoices', { memberId: m.id, currency: 'EUR', lines: [{ description: 'Dues', unitAmount: 9000 }] }), 201);
    await body(await post(key, '/payments', { invoiceId: invoice.id, amount: 4000, method: 'CARD' }), 201);
    const report = await body(await get(key, `/finance/reports?from=${TODAY}&to=${TODAY}`), 200);
    expect(report).toMatchObject({ from: TODAY, to: TODAY, currencies: [{ currency: 'EUR', totals: { invoiced: 9000, payments: 4000, paymentCount: 1, revenue: 4000, outstanding: 5000, overdue: 0 } }] });
    expect(report.currencies[0].byCategory).toEqual([expect.objectContaining({ categoryId: null, categoryName: null, invoiced: 9000 })]);

    const csv = await get(key, `/finance/reports?from=${TODAY}&to=${TODAY}&format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('x-ratelimit-limit')).toBeTruthy();
    const lines = (await csv.text()).trimEnd().split('\r\n');
    expect(lines[0]).toMatch(/^currency,dimension,month,/);
    expect(lines[1]).toBe('EUR,total,,,,9000,4000,1,0,0,4000,5000,0');
    await expectError(await get(key, `/finance/reports?from=${TODAY}&format=csv`), 400, 'invalid_parameter', 'to');
    await expectError(await get(key, `/finance/reports?from=${TODAY}&to=2000-01-01`), 400, 'invalid_parameter', 'to');
    await expectError(await platform.request(`/api/v1/finance/reports?from=${TODAY}&to=${TODAY}&format=csv`), 401, 'missing_api_key');
  });
});
