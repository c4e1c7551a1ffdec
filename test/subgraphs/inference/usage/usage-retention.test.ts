import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InferenceConfigError } from '../../../../subgraphs/inference/config/inference-config-error.js';
import { inferenceConfigFrom } from '../../../../subgraphs/inference/config/load-inference-config.js';
import { createInferenceSubgraph } from '../../../../subgraphs/inference/index.js';
import { DEFAULT_USAGE_RETENTION_MONTHS, MIN_USAGE_RETENTION_MONTHS } from '../../../../subgraphs/inference/usage/usage-limits.js';
import { UsageRecorder } from '../../../../subgraphs/inference/usage/usage-recorder.js';
import { UsageRetention } from '../../../../subgraphs/inference/usage/usage-retention.js';
import type { Subgraph } from '../../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../../support/database.js';
import { TEST_SECRET } from '../../../support/subgraph-harness.js';
import { capturedLogger } from '../../../support/captured-logger.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let subgraph: Subgraph;

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createInferenceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET });
});
afterAll(async () => {
  await subgraph?.close();
  await db?.drop();
});

function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  return subgraph.orm.em.getConnection().execute<T[]>(text, params, 'all');
}


const NOW = new Date();
/** The first instant of the month `back` months before the current one (UTC). */
const monthsBack = (back: number) => new Date(Date.UTC(NOW.getUTCFullYear(), NOW.getUTCMonth() - back, 1));
const partitionOf = (at: Date) => `usage_record_${at.toISOString().slice(0, 7).replace('-', '_')}`;

/** A month's partition made by hand: the recorder only makes the months around now. */
async function partition(at: Date): Promise<void> {
  const next = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  await sql(`create table if not exists "inference"."${partitionOf(at)}" partition of "inference"."usage_record" for values from ('${at.toISOString()}') to ('${next.toISOString()}')`);
}

/** One call per time given, written through the recorder (so the hourly sums are kept as in production). */
async function record(...times: [string, Date][]): Promise<void> {
  const recorder = new UsageRecorder(subgraph.orm, { logger: capturedLogger().logger });
  for (const [model, occurredAt] of times) {
    recorder.record({ interface: 'service_t', provider: 'service-t', model, promptTokens: 1, completionTokens: 2, latencyMs: 10, streamed: false, status: 200, occurredAt });
  }
  await recorder.close();
}

const models = async () => (await sql<{ model: string }>('select model from "inference"."usage_record" order by model')).map((r) => r.model);
const partitions = async () =>
  (
    await sql<{ name: string }>(`select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = '"inference"."usage_record"'::regclass order by 1`)
  ).map((r) => r.name);
const hourlyCalls = async () => Number((await sql<{ n: string }>('select coalesce(sum(calls), 0)::text as n from "inference"."usage_hour"'))[0].n);

beforeEach(async () => {
  for (const name of await partitions()) if (name !== 'usage_record_default' && name !== partitionOf(monthsBack(0)) && name !== partitionOf(monthsBack(-1))) await sql(`drop table "inference"."${name}"`);
  await sql('delete from "inference"."usage_record"');
  await sql('delete from "inference"."usage_hour"');
});

describe('usage retention', () => {
  it('drops the monthly partitions before the retention, deletes the default partition\'s rows before it, and keeps the hourly sums', async () => {
    const retention = DEFAULT_USAGE_RETENTION_MONTHS;
    await partition(monthsBack(retention + 1));
    await partition(monthsBack(retention));
    await record(
      ['dropped with its month', new Date(monthsBack(retention + 1).getTime() + 86_400_000)],
      ['kept: first month of the retention', new Date(monthsBack(retention).getTime() + 60_000)],
      // No partition of its own: these land in the default partition.
      ['deleted from the default partition', new Date('2019-03-04T05:06:07Z')],
      ['kept in the default partition', new Date(monthsBack(5).getTime() + 86_400_000)],
      ['kept: now', NOW],
    );
    const callsBefore = await hourlyCalls();
    expect(callsBefore).toBe(5);
    const { logger, lines } = capturedLogger();

    const sweep = await new UsageRetention(subgraph.orm, logger, retention).sweep(NOW);

    expect(sweep).toEqual({ keptFrom: monthsBack(retention), droppedPartitions: [partitionOf(monthsBack(retention + 1))], deletedRows: 1 });
    expect(await models()).toEqual(['kept in the default partition', 'kept: first month of the retention', 'kept: now']);
    expect(await partitions()).not.toContain(partitionOf(monthsBack(retention + 1)));
    expect(await partitions()).toContain(partitionOf(monthsBack(retention)));
    // The sums are what long-range figures are made of: every call still counts there.
    expect(await hourlyCalls()).toBe(callsBefore);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'usage records past the retention removed', deletedRows: 1 }));

    // Again: nothing left to remove.
    expect(await new UsageRetention(subgraph.orm, logger, retention).sweep(NOW)).toMatchObject({ droppedPartitions: [], deletedRows: 0 });
    // 0 keeps everything.
    await partition(monthsBack(40));
    await record(['old, kept forever', new Date(monthsBack(40).getTime() + 1000)]);
    expect(await new UsageRetention(subgraph.orm, logger, 0).sweep(NOW)).toMatchObject({ droppedPartitions: [], deletedRows: 0 });
    expect(await models()).toContain('old, kept forever');
  });

  it('gives up on a partition a long reader holds once its lock timeout passes (inserts queue behind a waiting DROP), and drops it at the next sweep', async () => {
    const old = monthsBack(DEFAULT_USAGE_RETENTION_MONTHS + 2);
    await partition(old);
    await record(['old', new Date(old.getTime() + 1000)]);
    const { logger, lines } = capturedLogger();
    const retention = new UsageRetention(subgraph.orm, logger, DEFAULT_USAGE_RETENTION_MONTHS);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let reading!: () => void;
    const readerHolds = new Promise<void>((resolve) => (reading = resolve));
    // A report reading the whole table in a long transaction: it holds the parent's share lock until it ends.
    const reader = subgraph.orm.em.fork().transactional(async (em) => {
      await em.getConnection().execute('select count(*) from "inference"."usage_record"', [], 'all', em.getTransactionContext());
      reading();
      await released;
    });
    await readerHolds;
    const started = Date.now();
    const blocked = await retention.sweep(NOW);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(blocked.droppedPartitions).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'usage partition past the retention not dropped; the next sweep tries again', partition: partitionOf(old) }));
    // Meanwhile new calls are recorded as ever.
    await record(['while the reader holds', NOW]);
    release();
    await reader;
    expect((await retention.sweep(NOW)).droppedPartitions).toEqual([partitionOf(old)]);
    expect(await models()).toEqual(['while the reader holds']);
  });

  it(`takes retentionMonths from the configuration: ${DEFAULT_USAGE_RETENTION_MONTHS} by default, 0 for all, never fewer than ${MIN_USAGE_RETENTION_MONTHS}`, () => {
    expect(inferenceConfigFrom({}, null).usage).toEqual({ retentionMonths: DEFAULT_USAGE_RETENTION_MONTHS });
    expect(inferenceConfigFrom({ usage: { retentionMonths: 0 } }, null).usage).toEqual({ retentionMonths: 0 });
    expect(inferenceConfigFrom({ usage: { retentionMonths: 24 } }, null).usage).toEqual({ retentionMonths: 24 });
    for (const bad of [MIN_USAGE_RETENTION_MONTHS - 1, -1, 2.5, '12']) {
      let error: unknown;
      try {
        inferenceConfigFrom({ usage: { retentionMonths: bad } }, null);
      } catch (caught) {
        error = caught;
      }
      expect(error, String(bad)).toBeInstanceOf(InferenceConfigError);
      expect((error as InferenceConfigError).issues.map((i) => i.path)).toEqual(['usage.retentionMonths']);
    }
  });
});
