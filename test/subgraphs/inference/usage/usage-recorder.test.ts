import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createInferenceSubgraph } from '../../../../subgraphs/inference/index.js';
import type { UsageEntry } from '../../../../subgraphs/inference/usage/usage-entry.js';
import { UsageRecorder } from '../../../../subgraphs/inference/usage/usage-recorder.js';
import type { Subgraph } from '../../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../../support/database.js';
import { TEST_SECRET } from '../../../support/subgraph-harness.js';
import { capturedLogger } from '../../../support/captured-logger.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let subgraph: Subgraph;
const statements: string[] = [];
const inserts = () => statements.filter((sql) => sql.includes('insert into "inference"."usage_record"'));

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createInferenceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, onQuery: (sql) => statements.push(sql) });
});

afterAll(async () => {
  await subgraph?.close();
  await db?.drop();
});

beforeEach(async () => {
  await sql('delete from "inference"."usage_record"');
  statements.length = 0;
});

function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  return subgraph.orm.em.getConnection().execute<T[]>(text, params, 'all');
}

const stored = async () => Number((await sql<{ n: number }>('select count(*)::int as n from "inference"."usage_record"'))[0].n);


let serial = 0;
function entry(overrides: Partial<UsageEntry> = {}): UsageEntry {
  serial += 1;
  return {
    interface: 'service_t',
    provider: 'service-t',
    model: `model-${serial}`,
    accountId: '00000000-0000-4000-8000-000000000001',
    keyId: 'key_recorder',
    promptTokens: 10,
    completionTokens: 20,
    latencyMs: 150,
    timeToFirstTokenMs: 40,
    streamed: true,
    status: 200,
    ...overrides,
  };
}

describe('the usage recorder', () => {
  it('returns from record() without touching the database; the batch is written only when the interval ends', async () => {
    const { logger } = capturedLogger();
    const recorder = new UsageRecorder(subgraph.orm, { batchSize: 200, flushIntervalMs: 400, logger });
    const started = performance.now();
    for (let i = 0; i < 50; i++) recorder.record(entry());
    const elapsed = performance.now() - started;
    expect(statements).toEqual([]);
    expect(recorder.stats()).toMatchObject({ recorded: 50, pending: 50, written: 0 });
    // Several turns of the event loop later, still nothing: only the interval starts a flush below a full batch.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(inserts()).toHaveLength(0);
    await vi.waitFor(() => expect(recorder.stats().written).toBe(50), { timeout: 3000, interval: 20 });
    expect(inserts()).toHaveLength(1);
    expect(await stored()).toBe(50);
    // 50 buffered records cost well under a millisecond each; a database round trip per record would not.
    expect(elapsed).toBeLessThan(50);
    await recorder.close();
  });

  it('writes a full batch at once, in one multi-row INSERT, without waiting for the interval', async () => {
    const recorder = new UsageRecorder(subgraph.orm, { batchSize: 100, flushIntervalMs: 60_000, logger: capturedLogger().logger });
    for (let i = 0; i < 100; i++) recorder.record(entry());
    expect(inserts()).toHaveLength(0);
    await vi.waitFor(() => expect(recorder.stats().written).toBe(100), { timeout: 3000, interval: 10 });
    expect(inserts()).toHaveLength(1);
    // Below a full batch the rest waits for the interval (a minute here).
    for (let i = 0; i < 99; i++) recorder.record(entry());
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(recorder.stats()).toMatchObject({ written: 100, pending: 99 });
    await recorder.close();
    expect(await stored()).toBe(199);
    expect(inserts()).toHaveLength(2);
  });

  it('stores every record of many concurrent callers, each once', async () => {
    const recorder = new UsageRecorder(subgraph.orm, { batchSize: 64, flushIntervalMs: 50, logger: capturedLogger().logger });
    const callers = Array.from({ length: 40 }, async (_, caller) => {
      for (let i = 0; i < 25; i++) {
        await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4)));
        recorder.record(entry({ keyId: `key_caller${caller}`, model: `m-${caller}-${i}` }));
      }
    });
    await Promise.all(callers);
    await recorder.close();
    const rows = await sql<{ n: number; models: number; ids: number }>(
      'select count(*)::int as n, count(distinct model)::int as models, count(distinct id)::int as ids from "inference"."usage_record"',
    );
    expect(rows[0]).toEqual({ n: 1000, models: 1000, ids: 1000 });
    expect(recorder.stats()).toMatchObject({ recorded: 1000, written: 1000, dropped: 0, lost: 0, pending: 0 });
    // Batched: far fewer statements than records.
    expect(inserts().length).toBeLessThan(100);
  });

  it('writes what is buffered on close(), and drops (and counts) what is recorded after it', async () => {
    const recorder = new UsageRecorder(subgraph.orm, { batchSize: 200, flushIntervalMs: 60_000, logger: capturedLogger().logger });
    for (let i = 0; i < 7; i++) recorder.record(entry());
    await recorder.close();
    expect(await stored()).toBe(7);
    recorder.record(entry());
    expect(recorder.stats()).toMatchObject({ written: 7, dropped: 1, pending: 0 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await stored()).toBe(7);
  });

  it('survives a database outage during a flush: nothing thrown to callers, one retry, the loss logged with its count', async () => {
    const { logger, lines } = capturedLogger();
    const recorder = new UsageRecorder(subgraph.orm, { batchSize: 200, flushIntervalMs: 60_000, retryDelayMs: 20, logger });
    await sql('alter table "inference"."usage_record" rename to "usage_record_away"');
    try {
      for (let i = 0; i < 10; i++) expect(() => recorder.record(entry())).not.toThrow();
      await expect(recorder.flush()).resolves.toBeUndefined();
      expect(recorder.stats()).toMatchObject({ written: 0, lost: 10, pending: 0 });
      expect(inserts()).toHaveLength(2);
      const retried = lines.filter((line) => line.msg === 'usage flush failed; trying once more');
      expect(retried).toHaveLength(1);
      const lost = lines.filter((line) => line.lost !== undefined);
      expect(lost).toHaveLength(1);
      expect(lost[0]).toMatchObject({ level: 50, lost: 10, msg: 'usage flush failed twice: records lost', component: 'usage-recorder' });
    } finally {
      await sql('alter table "inference"."usage_record_away" rename to "usage_record"');
    }
    // The recorder goes on once the database is back.
    for (let i = 0; i < 5; i++) recorder.record(entry());
    await recorder.close();
    expect(await stored()).toBe(5);
    expect(recorder.stats()).toMatchObject({ written: 5, lost: 10 });
  });

  it('drops the oldest records when the buffer is full, and logs how many', async () => {
    const { logger, lines } = capturedLogger();
    const recorder = new UsageRecorder(subgraph.orm, { batchSize: 50, maxBuffered: 50, flushIntervalMs: 60_000, logger });
    for (let i = 0; i < 80; i++) recorder.record(entry({ model: `drop-${String(i).padStart(2, '0')}` }));
    await recorder.close();
    expect(recorder.stats()).toMatchObject({ recorded: 80, dropped: 30, written: 50 });
    const models = await sql<{ model: string }>('select model from "inference"."usage_record" order by model');
    expect(models.map((row) => row.model)).toEqual(Array.from({ length: 50 }, (_, i) => `drop-${i + 30}`));
    expect(lines.find((line) => line.msg === 'usage buffer full: oldest records dropped')).toMatchObject({ level: 40, dropped: 30 });
  });

  it('stores entries a column would refuse cut down to fit, so they cannot fail their batch; refuses an unknown interface alone', async () => {
    const recorder = new UsageRecorder(subgraph.orm, { batchSize: 200, flushIntervalMs: 60_000, logger: capturedLogger().logger });
    recorder.record(
      entry({
        model: 'x'.repeat(500),
        provider: 'nul\u0000provider',
        errorCode: 'lone \ud800 surrogate',
        keyId: null,
        accountId: null,
        clientAddress: '::ffff:10.0.0.1',
        promptTokens: -5,
        completionTokens: 2 ** 40,
        latencyMs: 12.6,
        timeToFirstTokenMs: null,
        status: 503,
      }),
    );
    recorder.record(entry({ interface: 'carrier-pigeon' as never }));
    recorder.record(entry({ accountId: 'not-a-uuid' }));
    recorder.record(entry({ model: 'good' }));
    await recorder.close();
    expect(recorder.stats()).toMatchObject({ written: 2, refused: 2, lost: 0 });
    const [row] = await sql('select * from "inference"."usage_record" where model <> \'good\'');
    expect(row).toMatchObject({
      model: 'x'.repeat(200),
      provider: 'nulprovider',
      error_code: 'lone \ufffd surrogate',
      key_id: null,
      account_id: null,
      client_address: '::ffff:10.0.0.1',
      prompt_tokens: 0,
      completion_tokens: 2 ** 31 - 1,
      latency_ms: 13,
      time_to_first_token_ms: null,
      status: 503,
    });
  });

  it("puts each month's rows in that month's partition, creates next month's ahead, and sends far-off times to the default one", async () => {
    const recorder = new UsageRecorder(subgraph.orm, { logger: capturedLogger().logger });
    const now = new Date();
    recorder.record(entry({ occurredAt: now, model: 'now' }));
    recorder.record(entry({ occurredAt: new Date('2019-03-04T05:06:07Z'), model: 'old' }));
    await recorder.close();
    const month = (at: Date) => `usage_record_${at.toISOString().slice(0, 7).replace('-', '_')}`;
    const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const rows = await sql<{ model: string; partition: string }>(
      'select model, tableoid::regclass::text as partition from "inference"."usage_record" order by model',
    );
    expect(rows).toEqual([
      { model: 'now', partition: `inference.${month(now)}` },
      { model: 'old', partition: 'inference.usage_record_default' },
    ]);
    const partitions = await sql<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = '"inference"."usage_record"'::regclass order by 1`,
    );
    expect(partitions.map((p) => p.name)).toEqual(expect.arrayContaining([month(now), month(next), 'usage_record_default']));
  });
});
