import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { HourlySweep } from '../../../core/hourly-sweep.js';

/** A drop waits this long for the table lock, then gives up until the next sweep, instead of stalling every insert queued behind it. */
const LOCK_TIMEOUT = '2s';
const PARTITION = /^usage_record_(\d{4})_(\d{2})$/;

/** What one sweep removed. */
export interface UsageSweep {
  /** The first month kept (UTC); everything before it is gone. */
  keptFrom: Date;
  /** The monthly partitions dropped, by name. */
  droppedPartitions: string[];
  /** Rows deleted from the default partition (rows whose month had no partition of its own). */
  deletedRows: number;
}

/**
 * Usage records are kept for `retentionMonths` whole months before the current one, then dropped a
 * month at a time: the table is partitioned by month (usage-partitions.ts), so a month goes with
 * one DROP of its partition, not a DELETE of millions of rows that would bloat the table and its
 * indexes. The hourly sums the analytics read (analytics/usage-hour.entity.ts and the latency
 * histograms) are kept: they are small and are what long-range figures are made of. 0 keeps
 * everything. Every instance sweeps; the statements are idempotent, so two at once do no harm.
 */
export class UsageRetention {
  // Hourly: a month's partition goes at the first sweep after it is out of the retention.
  private readonly hourly = new HourlySweep(
    () => this.sweep(),
    (error) => this.logger.warn({ err: error }, 'usage retention sweep failed; it runs again within the hour'),
  );

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
    private readonly retentionMonths: number,
  ) {}

  /** Sweeps a minute after the start (not during it), then hourly; nothing when every record is kept. */
  start(): void {
    if (this.retentionMonths > 0) this.hourly.start();
  }

  /** Removes the records of every month before the retention, as of `now`. */
  async sweep(now = new Date()): Promise<UsageSweep> {
    const keptFrom = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - this.retentionMonths, 1));
    const result: UsageSweep = { keptFrom, droppedPartitions: [], deletedRows: 0 };
    if (this.retentionMonths === 0) return result;
    const connection = this.orm.em.getConnection();
    const partitions = await connection.execute<{ name: string }[]>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = '"inference"."usage_record"'::regclass`,
      [],
      'all',
    );
    const old = partitions
      .map(({ name }) => ({ name, match: PARTITION.exec(name) }))
      .filter(({ match }) => match && Date.UTC(Number(match[1]), Number(match[2]) - 1, 1) < keptFrom.getTime())
      .map(({ name }) => name)
      .sort();
    for (const name of old) {
      try {
        // DROP of a partition locks the parent for a moment; a lock timeout keeps a long reader
        // from making every insert queue behind this statement.
        await this.orm.em.fork().transactional(async (em) => {
          const ctx = em.getTransactionContext();
          await em.getConnection().execute(`set local lock_timeout = '${LOCK_TIMEOUT}'`, [], 'run', ctx);
          await em.getConnection().execute(`drop table if exists "inference"."${name}"`, [], 'run', ctx);
        });
        result.droppedPartitions.push(name);
      } catch (error) {
        this.logger.warn({ err: error, partition: name }, 'usage partition past the retention not dropped; the next sweep tries again');
      }
    }
    const deleted = await connection.execute<{ affectedRows?: number }>(
      `delete from "inference"."usage_record_default" where "occurred_at" < ?`,
      [keptFrom],
      'run',
    );
    result.deletedRows = (deleted as { affectedRows?: number }).affectedRows ?? 0;
    if (result.droppedPartitions.length || result.deletedRows) {
      this.logger.info({ keptFrom, droppedPartitions: result.droppedPartitions, deletedRows: result.deletedRows }, 'usage records past the retention removed');
    }
    return result;
  }

  /** Stops the sweeps and waits for one under way. */
  close(): Promise<void> {
    return this.hourly.close();
  }
}
