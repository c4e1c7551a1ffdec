import fc from 'fast-check';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalyticsService } from '../../../../subgraphs/inference/analytics/analytics.service.js';
import { bucketValue, histogramPercentiles, latencyBucket, latencyBucketSql } from '../../../../subgraphs/inference/analytics/latency-histogram.js';
import { createInferenceSubgraph } from '../../../../subgraphs/inference/index.js';
import type { UsageEntry } from '../../../../subgraphs/inference/usage/usage-entry.js';
import { UsageRecorder } from '../../../../subgraphs/inference/usage/usage-recorder.js';
import type { Subgraph } from '../../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../../support/database.js';
import { ocrOnlyInferenceConfig } from '../../../support/inference-config.js';
import { TEST_SECRET } from '../../../support/subgraph-harness.js';

/**
 * Model performance from the latency histograms (past the exact-percentile limit) against the
 * exact percentiles over the same records: the same counts, sums and throughput, percentiles
 * within 1%. The records span three days with ragged edges, so the answer combines a whole day of
 * daily histograms, whole hours of hourly ones and the records of the minutes at either end.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let subgraph: Subgraph;
let client: pg.Client;

const START = Date.parse('2026-05-10T09:00:00.000Z');
const HOUR = 3_600_000;

/** A deterministic spread of calls: several providers and models, long-tailed latencies, some errors. */
function records(): UsageEntry[] {
  const rows: UsageEntry[] = [];
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let i = 0; i < 3000; i++) {
    const status = i % 41 === 0 ? 502 : i % 53 === 0 ? 422 : 200;
    const latencyMs = Math.round(20 + random() ** 3 * 9000);
    rows.push({
      occurredAt: new Date(START + Math.floor(random() * 62 * HOUR)),
      interface: (['gateway', 'service_t', 'proxy'] as const)[i % 3]!,
      provider: `p${i % 3}`,
      model: `m${i % 2}`,
      clientAddress: '203.0.113.5',
      promptTokens: 10,
      completionTokens: status === 200 && i % 5 !== 0 ? 1 + (i % 90) : 0,
      latencyMs: i % 97 === 0 ? 0 : latencyMs,
      timeToFirstTokenMs: i % 4 === 0 ? null : Math.round(latencyMs / 7),
      streamed: i % 2 === 0,
      status,
    });
  }
  return rows;
}

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createInferenceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, inferenceConfig: ocrOnlyInferenceConfig() });
  // Half before a migration could have run and half after make no difference: the trigger sums every batch.
  const recorder = new UsageRecorder(subgraph.orm, { logger: pino({ level: 'silent' }), batchSize: 250 });
  for (const row of records()) recorder.record(row);
  await recorder.close();
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await subgraph?.close();
  await db?.drop();
});

describe('the buckets', () => {
  it('are the same in SQL and in TypeScript, and each bucket value lies within 1% of every latency in it', async () => {
    const values = [0, 1, 2, 3, 49, 50, 51, 99, 100, 101, 250, 999, 1000, 12_345, 300_000, 2_147_483_647];
    const { rows } = await client.query<{ v: number; b: number }>(`select v, ${latencyBucketSql('v')} as b from unnest($1::int[]) as v`, [values]);
    expect(rows.map((r) => r.b)).toEqual(values.map(latencyBucket));
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000_000 }), (ms) => {
        expect(Math.abs(bucketValue(latencyBucket(ms)) - ms) / ms).toBeLessThanOrEqual(0.01);
      }),
    );
  });

  it('give percentile_cont interpolation between ranks, and null for no calls', () => {
    // Four calls of 100, 200, 300, 400 ms: the median halfway between the second and third.
    const histogram = [100, 200, 300, 400].map((ms) => ({ bucket: latencyBucket(ms), calls: 1 }));
    const [p50, p95] = histogramPercentiles(histogram, [0.5, 0.95]);
    expect(p50).toBeCloseTo((bucketValue(latencyBucket(200)) + bucketValue(latencyBucket(300))) / 2, 6);
    expect(Math.abs(p50! - 250) / 250).toBeLessThan(0.01);
    expect(Math.abs(p95! - 385) / 385).toBeLessThan(0.01);
    expect(histogramPercentiles([], [0.5])).toEqual([null]);
  });
});

describe('performance past the exact-percentile limit', () => {
  const ranges = {
    'three ragged days': { from: new Date(START + 17 * 60_000 + 3_000), to: new Date(START + 61 * HOUR + 43 * 60_000) },
    'whole hours inside one day': { from: new Date(START + 2 * HOUR), to: new Date(START + 9 * HOUR) },
    'one provider and model over all of it': { from: new Date(START - HOUR), to: new Date(START + 70 * HOUR), provider: 'p1', model: 'm1' },
  };

  it.each(Object.entries(ranges))('%s: the histograms agree with the records', async (_name, filter) => {
    const em = subgraph.orm.em.fork() as never;
    const exact = await new AnalyticsService(em, Number.POSITIVE_INFINITY).performance({ kind: 'all' }, filter);
    const estimated = await new AnalyticsService(em, 0).performance({ kind: 'all' }, filter);
    expect(exact.length).toBeGreaterThan(0);
    // Bucket values, not the exact ones: the answer did come from the histograms.
    expect(estimated.some((p, i) => p.latencyP50Ms !== exact[i]!.latencyP50Ms)).toBe(true);
    expect(estimated.map((p) => [p.provider, p.model])).toEqual(exact.map((p) => [p.provider, p.model]));
    exact.forEach((want, i) => {
      const got = estimated[i]!;
      expect({ ...got, latencyP50Ms: 0, latencyP95Ms: 0, timeToFirstTokenP50Ms: 0, completionTokensPerSecond: 0 }).toEqual({ ...want, latencyP50Ms: 0, latencyP95Ms: 0, timeToFirstTokenP50Ms: 0, completionTokensPerSecond: 0 });
      expect(got.completionTokensPerSecond).toBeCloseTo(want.completionTokensPerSecond!, 9);
      for (const key of ['latencyP50Ms', 'latencyP95Ms', 'timeToFirstTokenP50Ms'] as const) {
        expect(Math.abs(got[key]! - want[key]!) / want[key]!, `${got.provider} ${got.model} ${key}: ${got[key]} against ${want[key]}`).toBeLessThanOrEqual(0.01);
      }
    });
  });

  it('keeps the hourly and daily histograms equal to the records they count', async () => {
    const counted = async (table: string, unit: string) =>
      (await client.query(`select ${unit} as at, provider, model, metric, bucket, calls::int from inference.${table} order by 1, 2, 3, 4, 5`)).rows;
    const fromRecords = async (unit: string) =>
      (
        await client.query(
          `select date_bin('1 ${unit}', occurred_at, timestamptz '2000-01-01 00:00:00+00') as at, provider, model, m.metric, m.bucket, count(*)::int as calls
           from inference.usage_record r cross join lateral (values (0::smallint, ${latencyBucketSql('r.latency_ms')}), (1::smallint, ${latencyBucketSql('r.time_to_first_token_ms')})) as m(metric, bucket)
           where status < 400 and m.bucket is not null group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5`,
        )
      ).rows;
    expect(await counted('usage_latency_hour', 'hour')).toEqual(await fromRecords('hour'));
    expect(await counted('usage_latency_day', 'day')).toEqual(await fromRecords('day'));
  });
});
