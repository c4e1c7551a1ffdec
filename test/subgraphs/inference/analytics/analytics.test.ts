import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalyticsService } from '../../../../subgraphs/inference/analytics/analytics.service.js';
import { createInferenceSubgraph } from '../../../../subgraphs/inference/index.js';
import type { UsageEntry } from '../../../../subgraphs/inference/usage/usage-entry.js';
import { UsageRecorder } from '../../../../subgraphs/inference/usage/usage-recorder.js';
import type { Principal } from '../../../../core/principal.js';
import type { Subgraph } from '../../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../../support/database.js';
import { ocrOnlyInferenceConfig } from '../../../support/inference-config.js';
import { principalFor, run, TEST_SECRET } from '../../../support/subgraph-harness.js';

/**
 * Analytics over known usage records: exact sums, percentiles (percentile_cont interpolates),
 * buckets, paging, filters, the account scope of text and image keys and the checks of the range.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let subgraph: Subgraph;
const textKey = principalFor('analytics-text', 'text');
const imageKey = principalFor('analytics-image', 'image');
const admin = principalFor('analytics-admin', 'admin');
const FROM = '2026-06-01T00:00:00.000Z';
const TO = '2026-06-01T06:00:00.000Z';
const ADDRESS = '203.0.113.9';
const at = (time: string) => new Date(`2026-06-01T${time}Z`);

const keyless = (time: string, latencyMs: number, completionTokens: number, timeToFirstTokenMs: number | null): UsageEntry => ({
  occurredAt: at(time),
  clientAddress: ADDRESS,
  interface: 'gateway',
  provider: 'p1',
  model: 'm1',
  promptTokens: 5,
  completionTokens,
  latencyMs,
  timeToFirstTokenMs,
  streamed: true,
  status: 200,
});

const ROWS: UsageEntry[] = [
  keyless('00:00:10', 100, 10, 10),
  keyless('00:00:50', 200, 20, 20),
  keyless('00:01:30', 300, 30, null),
  keyless('01:00:00', 400, 40, 40),
  { occurredAt: at('00:00:20'), accountId: textKey.accountId, keyId: textKey.keyId, interface: 'service_t', provider: 'p1', model: 'm1', promptTokens: 8, completionTokens: 0, latencyMs: 1000, streamed: false, status: 502, errorCode: 'upstream_error' },
  { occurredAt: at('02:30:00'), accountId: textKey.accountId, keyId: textKey.keyId, interface: 'graphql', provider: 'p2', model: 'm2', promptTokens: 3, completionTokens: 0, latencyMs: 50, streamed: false, status: 422, errorCode: 'invalid_value' },
  { occurredAt: at('02:31:00'), accountId: imageKey.accountId, keyId: imageKey.keyId, interface: 'service_i', provider: 'p2', model: 'm2', promptTokens: 7, completionTokens: 50, latencyMs: 500, timeToFirstTokenMs: 100, streamed: true, status: 200 },
  // Just outside the range on both sides: never counted.
  { ...keyless('00:00:00', 9999, 999, 1), occurredAt: new Date(new Date(FROM).getTime() - 1) },
  { ...keyless('00:00:00', 9999, 999, 1), occurredAt: new Date(TO) },
];

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createInferenceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, inferenceConfig: ocrOnlyInferenceConfig() });
  const recorder = new UsageRecorder(subgraph.orm, { logger: pino({ level: 'silent' }) });
  for (const row of ROWS) recorder.record(row);
  await recorder.close();
});

afterAll(async () => {
  await subgraph?.close();
  await db?.drop();
});

const ANALYTICS = `query($from: DateTime!, $to: DateTime!, $provider: String, $model: String, $interface: InferenceInterface, $bucket: InferenceAnalyticsBucket, $limit: Int, $after: String) {
  inferenceAnalytics(from: $from, to: $to, provider: $provider, model: $model, interface: $interface, bucket: $bucket, limit: $limit, after: $after) {
    from to provider model interface
    usage { bucket truncated data { bucketStart provider model interface calls promptTokens completionTokens totalTokens errors errorRate } }
    performance { provider model calls succeeded serverErrors errorRate latencyP50Ms latencyP95Ms timeToFirstTokenP50Ms completionTokensPerSecond }
    history { data { id occurredAt interface provider model status accountId clientAddress } limit hasMore nextCursor }
  }
}`;

interface Analytics {
  usage: { bucket: string; truncated: boolean; data: Record<string, unknown>[] };
  performance: Record<string, unknown>[];
  history: { data: { id: string; occurredAt: string; interface: string; provider: string; model: string; status: number; accountId: string | null }[]; limit: number; hasMore: boolean; nextCursor: string | null };
}

async function analytics(principal: Principal, variables: Record<string, unknown> = {}): Promise<Analytics> {
  const result = await run<{ inferenceAnalytics: Analytics }>(subgraph, principal, ANALYTICS, { from: FROM, to: TO, ...variables });
  expect(result.errors).toBeUndefined();
  // As a client reads it: dates as the DateTime scalar serialises them.
  return JSON.parse(JSON.stringify(result.data!.inferenceAnalytics)) as Analytics;
}

async function refusal(principal: Principal, variables: Record<string, unknown>) {
  const result = await run(subgraph, principal, ANALYTICS, { from: FROM, to: TO, ...variables });
  expect(result.data).toBeNull();
  return result.errors![0]!.extensions;
}

const stat = (bucketStart: string, provider: string, model: string, iface: string, calls: number, prompt: number, completion: number, errors: number) => ({
  bucketStart: `2026-06-01T${bucketStart}:00.000Z`,
  provider,
  model,
  interface: iface,
  calls,
  promptTokens: prompt,
  completionTokens: completion,
  totalTokens: prompt + completion,
  errors,
  errorRate: errors / calls,
});

describe('usage statistics', () => {
  it('sum calls, tokens and errors per hour, provider, model and interface, oldest bucket first', async () => {
    const { usage } = await analytics(admin, { bucket: 'HOUR' });
    expect(usage.bucket).toBe('HOUR');
    expect(usage.truncated).toBe(false);
    expect(usage.data).toEqual([
      stat('00:00', 'p1', 'm1', 'GATEWAY', 3, 15, 60, 0),
      stat('00:00', 'p1', 'm1', 'SERVICE_T', 1, 8, 0, 1),
      stat('01:00', 'p1', 'm1', 'GATEWAY', 1, 5, 40, 0),
      stat('02:00', 'p2', 'm2', 'GRAPHQL', 1, 3, 0, 1),
      stat('02:00', 'p2', 'm2', 'SERVICE_I', 1, 7, 50, 0),
    ]);
  });

  it('derive a minute bucket for a range of six hours, a day bucket for thirty days, and cut at whole UTC minutes', async () => {
    const { usage } = await analytics(admin, { provider: 'p1', interface: 'GATEWAY' });
    expect(usage.bucket).toBe('MINUTE');
    expect(usage.data.map((s) => [s.bucketStart, s.calls])).toEqual([
      ['2026-06-01T00:00:00.000Z', 2],
      ['2026-06-01T00:01:00.000Z', 1],
      ['2026-06-01T01:00:00.000Z', 1],
    ]);
    const month = await analytics(admin, { from: '2026-05-15T00:00:00Z', to: '2026-06-14T00:00:00Z' });
    expect(month.usage.bucket).toBe('DAY');
    // The day bucket holds the record 1 ms before FROM (May 31) and the one at TO (June 1, 06:00).
    const byDay: Record<string, number> = {};
    for (const s of month.usage.data) byDay[s.bucketStart as string] = (byDay[s.bucketStart as string] ?? 0) + (s.calls as number);
    expect(byDay).toEqual({ '2026-05-31T00:00:00.000Z': 1, '2026-06-01T00:00:00.000Z': 8 });
  });

  it('add the ragged edges of a range, read from the records, to its whole hours, read from the hourly sums', async () => {
    const { usage } = await analytics(admin, { from: '2026-06-01T00:00:30Z', to: '2026-06-01T02:30:30Z', bucket: 'HOUR' });
    expect(usage.data).toEqual([
      // 00:00:50 and 00:01:30 from the first edge; the service_t call at 00:00:20 is before the range.
      stat('00:00', 'p1', 'm1', 'GATEWAY', 2, 10, 50, 0),
      stat('01:00', 'p1', 'm1', 'GATEWAY', 1, 5, 40, 0),
      // 02:30:00 from the last edge; 02:31:00 is after the range.
      stat('02:00', 'p2', 'm2', 'GRAPHQL', 1, 3, 0, 1),
    ]);
    const inOneHour = await analytics(admin, { from: '2026-06-01T00:00:30Z', to: '2026-06-01T00:59:00Z', bucket: 'HOUR', provider: 'p1' });
    expect(inOneHour.usage.data).toEqual([stat('00:00', 'p1', 'm1', 'GATEWAY', 2, 10, 50, 0)]);
  });

  it('are kept in hourly sums by the insert trigger, records outside any range included', async () => {
    const rows = await subgraph.orm.em.getConnection().execute(`select sum(calls)::int as calls, sum(errors)::int as errors, sum(completion_tokens)::int as completion from inference.usage_hour`);
    expect(rows[0]).toEqual({ calls: 9, errors: 2, completion: 100 + 50 + 2 * 999 });
  });

  it('filter by provider, model and interface together', async () => {
    const { usage } = await analytics(admin, { model: 'm2', interface: 'SERVICE_I', bucket: 'DAY' });
    expect(usage.data).toEqual([stat('00:00', 'p2', 'm2', 'SERVICE_I', 1, 7, 50, 0)]);
    const none = await analytics(admin, { provider: 'p2', model: 'm1' });
    expect(none.usage.data).toEqual([]);
    expect(none.performance).toEqual([]);
    expect(none.history.data).toEqual([]);
  });
});

describe('model performance', () => {
  it('gives interpolated p50 and p95 latency and p50 time to first token of the successful calls, throughput and the server error rate', async () => {
    const { performance } = await analytics(admin);
    expect(performance).toEqual([
      {
        provider: 'p1',
        model: 'm1',
        calls: 5,
        succeeded: 4,
        serverErrors: 1,
        errorRate: 0.2,
        // 100, 200, 300, 400: the median halfway between 200 and 300; p95 at 0.85 of the way from 300 to 400.
        latencyP50Ms: 250,
        latencyP95Ms: 385,
        // 10, 20, 40 (one successful call had no first token).
        timeToFirstTokenP50Ms: 20,
        // 100 tokens in 1000 ms of successful calls.
        completionTokensPerSecond: 100,
      },
      {
        provider: 'p2',
        model: 'm2',
        calls: 2,
        succeeded: 1,
        // A 422 is the client's mistake, not the model's failure.
        serverErrors: 0,
        errorRate: 0,
        latencyP50Ms: 500,
        latencyP95Ms: 500,
        timeToFirstTokenP50Ms: 100,
        completionTokensPerSecond: 100,
      },
    ]);
  });

  it('has no latency figures for a model without a successful call', async () => {
    const { performance } = await analytics(textKey, { provider: 'p1' });
    expect(performance).toEqual([
      { provider: 'p1', model: 'm1', calls: 1, succeeded: 0, serverErrors: 1, errorRate: 1, latencyP50Ms: null, latencyP95Ms: null, timeToFirstTokenP50Ms: null, completionTokensPerSecond: null },
    ]);
  });
});

describe('call history', () => {
  it('pages every call of the range newest first, and the pages join up without gaps or repeats', async () => {
    const ids: string[] = [];
    const times: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const { history }: Analytics = await analytics(admin, { limit: 3, after });
      ids.push(...history.data.map((r) => r.id));
      times.push(...history.data.map((r) => r.occurredAt));
      expect(history.limit).toBe(3);
      expect(history.hasMore).toBe(history.nextCursor !== null);
      after = history.nextCursor;
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(new Set(ids).size).toBe(7);
    expect(times).toEqual([...times].sort().reverse());
    expect(times[0]).toBe('2026-06-01T02:31:00.000Z');
    expect(times.at(-1)).toBe('2026-06-01T00:00:10.000Z');
  });

  it('continues a page of inferenceUsage: the cursors are the same', async () => {
    const first = await run<{ inferenceUsage: { nextCursor: string } }>(subgraph, admin, 'query($from: DateTime!, $to: DateTime!) { inferenceUsage(from: $from, to: $to, limit: 2) { nextCursor } }', { from: FROM, to: TO });
    const { history } = await analytics(admin, { limit: 1, after: first.data!.inferenceUsage.nextCursor });
    expect(history.data[0]!.occurredAt).toBe('2026-06-01T01:00:00.000Z');
  });
});

describe('scope', () => {
  it('shows a text key its own account only, in every section', async () => {
    const result = await analytics(textKey, { bucket: 'HOUR' });
    expect(result.usage.data).toEqual([stat('00:00', 'p1', 'm1', 'SERVICE_T', 1, 8, 0, 1), stat('02:00', 'p2', 'm2', 'GRAPHQL', 1, 3, 0, 1)]);
    expect(result.performance.map((p) => [p.provider, p.calls])).toEqual([
      ['p1', 1],
      ['p2', 1],
    ]);
    expect(result.history.data.map((r) => r.accountId)).toEqual([textKey.accountId, textKey.accountId]);
  });

  it('shows an image key its own account only', async () => {
    const result = await analytics(imageKey);
    expect(result.history.data.map((r) => r.interface)).toEqual(['SERVICE_I']);
    expect(result.performance).toHaveLength(1);
    expect(result.usage.data.map((s) => s.calls)).toEqual([1]);
  });

  it('shows a client address its own keyless calls (the gateway scope), with the aggregates of everything', async () => {
    const service = new AnalyticsService(subgraph.orm.em.fork() as never);
    const range = { from: new Date(FROM), to: new Date(TO) };
    const own = await service.history({ kind: 'address', address: ADDRESS }, range);
    expect(own.data.map((r) => r.latencyMs)).toEqual([400, 300, 200, 100]);
    expect((await service.history({ kind: 'address', address: '198.51.100.1' }, range)).data).toEqual([]);
    expect((await service.performance({ kind: 'all' }, range)).map((p) => p.calls)).toEqual([5, 2]);
  });
});

describe('checks', () => {
  it('refuses a range that ends before it starts, or wider than 90 days, naming the parameter', async () => {
    expect(await refusal(admin, { from: TO, to: FROM })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'to' });
    expect(await refusal(admin, { from: '2026-01-01T00:00:00Z', to: '2026-04-02T00:00:00Z' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'from' });
  });

  it('refuses a bucket that cuts the range into more than 2160 buckets', async () => {
    expect(await refusal(admin, { from: '2026-05-01T00:00:00Z', to: '2026-06-01T00:00:00Z', bucket: 'MINUTE' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'bucket' });
    // 90 days by the hour is exactly the limit.
    expect((await analytics(admin, { from: '2026-03-03T00:00:00Z', to: '2026-06-01T00:00:00Z', bucket: 'HOUR' })).usage.bucket).toBe('HOUR');
  });

  it('refuses a cursor it did not issue, and a page size out of range', async () => {
    expect(await refusal(admin, { after: 'bm90LWEtY3Vyc29y' })).toMatchObject({ code: 'BAD_USER_INPUT', param: 'after' });
    const result = await run(subgraph, admin, ANALYTICS, { from: FROM, to: TO, limit: 0 });
    expect(result.errors![0]!.extensions!.code).toBe('BAD_USER_INPUT');
  });
});
