import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidV7 } from '../../subgraphs/shared/uuid-v7.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/**
 * GET /v1/analytics and /v1/recommendations on the keyless gateway of a running platform (the
 * default test configuration: the OCR engine on four providers, no llama). Usage rows are written
 * straight into the table; the caller's own address is learnt from a call the gateway recorded.
 */
let platform: TestPlatform;
let db: pg.Client;
let address: string;
const FROM = '2026-06-01T00:00:00.000Z';
const TO = '2026-06-02T00:00:00.000Z';

interface Row {
  at: string;
  iface: string;
  provider: string;
  model: string;
  latency: number;
  status: number;
  address?: string | null;
  account?: string | null;
  completion?: number;
}

async function insert(rows: Row[]): Promise<void> {
  for (const row of rows) {
    const at = new Date(row.at);
    await db.query(
      `insert into inference.usage_record (id, occurred_at, account_id, key_id, client_address, interface, provider, model, prompt_tokens, completion_tokens, latency_ms, time_to_first_token_ms, streamed, status, error_code)
       values ($1, $2, $3, $4, $5, $6, $7, $8, 2, $9, $10, null, false, $11, $12)`,
      [uuidV7(at), at, row.account ?? null, row.account ? 'key_analytics' : null, row.address ?? null, row.iface, row.provider, row.model, row.completion ?? 10, row.latency, row.status, row.status >= 400 ? 'upstream_error' : null],
    );
  }
}

beforeAll(async () => {
  platform = await startTestPlatform();
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  // A refused gateway call is recorded with the address the edge saw for this client.
  const probe = await platform.request('/inference/gateway/v1/chat/completions', { method: 'POST', json: { model: 'analytics-probe', messages: [{ role: 'user', content: 'hi' }] } });
  expect(probe.status).toBe(404);
  for (let tries = 0; ; tries++) {
    const { rows } = await db.query(`select client_address from inference.usage_record where model = 'analytics-probe'`);
    if (rows.length) {
      address = rows[0].client_address;
      break;
    }
    // Records are written in batches, a second apart; the bound only ends a failing run.
    if (tries > 300) throw new Error('the probe call was not recorded');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await insert([
    { at: '2026-06-01T10:00:00Z', iface: 'gateway', provider: 'provider_a', model: 'ocr-eng', latency: 100, status: 200, address },
    { at: '2026-06-01T10:30:00Z', iface: 'gateway', provider: 'provider_a', model: 'ocr-eng', latency: 300, status: 200, address },
    { at: '2026-06-01T11:00:00Z', iface: 'gateway', provider: 'provider_b', model: 'ocr-eng', latency: 50, status: 502, address, completion: 0 },
    // Another client's keyless calls and a keyed account's: in the aggregates, never in this caller's history.
    { at: '2026-06-01T10:10:00Z', iface: 'gateway', provider: 'provider_a', model: 'ocr-eng', latency: 200, status: 200, address: '198.51.100.77' },
    { at: '2026-06-01T10:20:00Z', iface: 'service_t', provider: 'provider_a', model: 'ocr-eng', latency: 400, status: 200, account: '00000000-0000-4000-8000-00000000a001' },
  ]);
}, 120_000);

afterAll(async () => {
  await db?.end();
  await platform?.close();
});

const get = async (path: string) => {
  const response = await platform.request(`/inference/gateway/v1/${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};
const analytics = (query: string) => get(`analytics?from=${FROM}&to=${TO}${query}`);

describe('GET /v1/analytics', () => {
  it('answers usage and performance of every call and the history of the caller, in snake_case', async () => {
    const { status, body } = await analytics('&bucket=hour');
    expect(status).toBe(200);
    expect(body).toMatchObject({ object: 'analytics', from: FROM, to: TO, filters: { provider: null, model: null, interface: null } });
    expect(body.usage.bucket).toBe('hour');
    expect(body.usage.data).toEqual([
      { bucket_start: '2026-06-01T10:00:00.000Z', provider: 'provider_a', model: 'ocr-eng', interface: 'gateway', calls: 3, prompt_tokens: 6, completion_tokens: 30, total_tokens: 36, images: 0, errors: 0, error_rate: 0 },
      { bucket_start: '2026-06-01T10:00:00.000Z', provider: 'provider_a', model: 'ocr-eng', interface: 'service_t', calls: 1, prompt_tokens: 2, completion_tokens: 10, total_tokens: 12, images: 0, errors: 0, error_rate: 0 },
      { bucket_start: '2026-06-01T11:00:00.000Z', provider: 'provider_b', model: 'ocr-eng', interface: 'gateway', calls: 1, prompt_tokens: 2, completion_tokens: 0, total_tokens: 2, images: 0, errors: 1, error_rate: 1 },
    ]);
    expect(body.performance.data).toEqual([
      {
        provider: 'provider_a',
        model: 'ocr-eng',
        calls: 4,
        succeeded: 4,
        server_errors: 0,
        error_rate: 0,
        latency_p50_ms: 250,
        latency_p95_ms: 385,
        time_to_first_token_p50_ms: null,
        completion_tokens_per_second: 40,
      },
      {
        provider: 'provider_b',
        model: 'ocr-eng',
        calls: 1,
        succeeded: 0,
        server_errors: 1,
        error_rate: 1,
        latency_p50_ms: null,
        latency_p95_ms: null,
        time_to_first_token_p50_ms: null,
        completion_tokens_per_second: null,
      },
    ]);
    // Only the caller's own three calls, newest first, without anyone's key or account.
    expect(body.history.data.map((r: { occurred_at: string }) => r.occurred_at)).toEqual(['2026-06-01T11:00:00.000Z', '2026-06-01T10:30:00.000Z', '2026-06-01T10:00:00.000Z']);
    expect(body.history.data[0]).toEqual({
      id: expect.any(String),
      occurred_at: '2026-06-01T11:00:00.000Z',
      interface: 'gateway',
      provider: 'provider_b',
      model: 'ocr-eng',
      prompt_tokens: 2,
      completion_tokens: 0,
      images: 0,
      total_tokens: 2,
      latency_ms: 50,
      time_to_first_token_ms: null,
      streamed: false,
      status: 502,
      error_code: 'upstream_error',
    });
    expect(body.history).toMatchObject({ limit: 50, has_more: false, next_cursor: null });
  });

  it('pages the history with limit and after', async () => {
    const first = await analytics('&section=history&limit=2');
    expect(first.body.history).toMatchObject({ limit: 2, has_more: true });
    expect(first.body.usage).toBeUndefined();
    expect(first.body.performance).toBeUndefined();
    const second = await analytics(`&section=history&limit=2&after=${first.body.history.next_cursor}`);
    expect(second.body.history.data.map((r: { latency_ms: number }) => r.latency_ms)).toEqual([100]);
    expect(second.body.history).toMatchObject({ has_more: false, next_cursor: null });
  });

  it('filters by provider and interface, and answers the sections asked for', async () => {
    const { body } = await analytics('&provider=provider_a&interface=gateway&section=usage,performance&bucket=day');
    expect(body.usage.data).toEqual([expect.objectContaining({ bucket_start: '2026-06-01T00:00:00.000Z', interface: 'gateway', calls: 3 })]);
    expect(body.performance.data).toEqual([expect.objectContaining({ provider: 'provider_a', calls: 3, latency_p50_ms: 200 })]);
    expect(body.history).toBeUndefined();
  });

  it('defaults to the last 24 hours', async () => {
    const { status, body } = await get('analytics?section=usage');
    expect(status).toBe(200);
    expect(new Date(body.to).getTime() - new Date(body.from).getTime()).toBe(86_400_000);
    expect(body.usage.bucket).toBe('hour');
    // The probe call of a moment ago.
    expect(body.usage.data).toEqual([expect.objectContaining({ model: 'analytics-probe', calls: 1, errors: 1 })]);
  });

  it.each([
    ['from=yesterday', 'from'],
    [`from=${TO}&to=${FROM}`, 'to'],
    ['from=2026-01-01&to=2026-04-02', 'from'],
    [`from=${FROM}&to=${TO}&bucket=week`, 'bucket'],
    ['from=2026-05-01&to=2026-06-01&bucket=minute', 'bucket'],
    [`from=${FROM}&to=${TO}&limit=0`, 'limit'],
    [`from=${FROM}&to=${TO}&limit=201`, 'limit'],
    [`from=${FROM}&to=${TO}&after=not-a-cursor`, 'after'],
    [`from=${FROM}&to=${TO}&interface=telepathy`, 'interface'],
    [`from=${FROM}&to=${TO}&section=gossip`, 'section'],
    [`from=${FROM}&from=${TO}`, 'from'],
  ])('refuses %s with 422 naming %s', async (query, param) => {
    const { status, body } = await get(`analytics?${query}`);
    expect(status).toBe(422);
    expect(body).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param, code: 'invalid_value' } });
  });

  it('refuses a parameter it does not take with 400', async () => {
    const { status, body } = await get('analytics?account=someone');
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'unknown_parameter', param: 'account' });
  });
});

describe('GET /v1/recommendations', () => {
  it('ranks the OCR models for ocr, with why', async () => {
    const { status, body } = await get('recommendations?category=ocr');
    expect(status).toBe(200);
    expect(body.object).toBe('list');
    expect(body.data).toHaveLength(1);
    const [ocr] = body.data;
    expect(ocr.category).toBe('ocr');
    expect(ocr.recommendations.map((r: { provider: string; model: string }) => `${r.provider}/${r.model}`)).toEqual([
      'provider_a/ocr-eng',
      'provider_b/ocr-eng',
      'provider_c/ocr-eng',
      'provider_d/ocr-eng',
    ]);
    expect(ocr.recommended).toEqual({ provider: 'provider_a', model: 'ocr-eng' });
    expect(ocr.recommendations[0]).toMatchObject({ rank: 1, score: 0, why: { quality_tier: 'standard', quality_configured: false, measured: false, latency_p50_ms: null, error_rate: null } });
    expect(ocr.recommendations[0].why.summary).toMatch(/none configured/);
  });

  it('answers every category without one; chat has no model when only the OCR engine serves', async () => {
    const { body } = await get('recommendations');
    expect(body.data.map((c: { category: string }) => c.category)).toEqual(['chat', 'coding', 'vision', 'ocr', 'image', 'upscale', 'fast-text']);
    const chat = body.data.find((c: { category: string }) => c.category === 'chat');
    expect(chat).toMatchObject({ recommended: null, recommendations: [] });
    expect(chat.note).toMatch(/No model the gateway serves qualifies/);
  });

  it('refuses an unknown category with 422 naming category', async () => {
    const { status, body } = await get('recommendations?category=poetry');
    expect(status).toBe(422);
    expect(body.error).toMatchObject({ code: 'invalid_value', param: 'category', type: 'invalid_request_error' });
    expect(body.error.message).toContain('fast-text');
  });

  it('is listed by /v1/routes with /v1/analytics', async () => {
    const { body } = await get('routes');
    const paths = body.data.map((r: { method: string; path: string }) => `${r.method} ${r.path}`);
    expect(paths).toEqual(expect.arrayContaining(['GET /v1/analytics', 'GET /v1/recommendations']));
  });
});
