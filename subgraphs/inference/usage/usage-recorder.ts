import type { MikroORM } from '@mikro-orm/postgresql';
import { pino, type Logger } from 'pino';
import { usageRowOf, type UsageEntry, type UsageRow } from './usage-entry.js';
import { observeInference } from './usage-metrics.js';
import { UsagePartitions } from './usage-partitions.js';

const COLUMNS: [keyof UsageRow, string][] = [
  ['id', 'uuid'], ['occurred_at', 'timestamptz'], ['account_id', 'uuid'], ['prompt_tokens', 'int'], ['completion_tokens', 'int'],
  ['latency_ms', 'int'], ['time_to_first_token_ms', 'int'], ['status', 'smallint'], ['streamed', 'boolean'], ['interface', 'text'],
  ['provider', 'varchar'], ['model', 'varchar'], ['key_id', 'varchar'], ['client_address', 'varchar'], ['error_code', 'varchar'], ['images', 'smallint'],
];
const NAMES = COLUMNS.map(([name]) => `"${name}"`).join(', ');
const RECORD = COLUMNS.map(([name, type]) => `"${name}" ${type}`).join(', ');
const INSERT = `insert into "inference"."usage_record" (${NAMES}) select ${NAMES} from jsonb_to_recordset(?::jsonb) as r(${RECORD})`;

export interface UsageRecorderOptions {
  /** A flush starts as soon as this many records wait; default 200. */
  batchSize?: number;
  /** ...or this long after the first record of a batch arrived; default 1000 ms. */
  flushIntervalMs?: number;
  /** The most records held in memory (a database outage); beyond it the oldest are dropped. Default 10,000. */
  maxBuffered?: number;
  /** The pause before a failed batch is tried the second and last time; default 500 ms. */
  retryDelayMs?: number;
  logger?: Logger;
}

/** The recorder's counters since it started, for a metrics endpoint and for tests. */
export interface UsageRecorderStats {
  /** Entries accepted into the buffer. */
  recorded: number;
  /** Rows the database has confirmed. */
  written: number;
  /** Oldest entries dropped from a full buffer, and entries recorded after close(). */
  dropped: number;
  /** Entries no row could be made of (an unknown interface, an account id that is no uuid). */
  refused: number;
  /** Rows of batches that failed twice. */
  lost: number;
  /** Entries waiting for a flush now. */
  pending: number;
  /** INSERT statements tried, failed ones and retries included. */
  flushes: number;
}

/**
 * Durable usage records without slowing any answer: `record()` only validates and buffers, and
 * batches are written apart from every caller, with one multi-row INSERT per flush. A failed
 * flush is tried once more and then logged with the number of records lost; nothing is thrown
 * to callers, and the process never stops for it.
 */
export class UsageRecorder {
  private buffer: UsageRow[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private inFlight: Promise<void> | null = null;
  private closed = false;
  private droppedSinceLog = 0;
  private droppedAfterClose = false;
  private readonly counts = { recorded: 0, written: 0, dropped: 0, refused: 0, lost: 0, flushes: 0 };
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly maxBuffered: number;
  private readonly retryDelayMs: number;
  private readonly logger: Logger;
  private readonly partitions: UsagePartitions;

  constructor(
    private readonly orm: MikroORM,
    options: UsageRecorderOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 200;
    this.flushIntervalMs = options.flushIntervalMs ?? 1000;
    this.maxBuffered = Math.max(options.maxBuffered ?? 10_000, this.batchSize);
    this.retryDelayMs = options.retryDelayMs ?? 500;
    this.logger = (options.logger ?? pino()).child({ component: 'usage-recorder' });
    this.partitions = new UsagePartitions(orm, this.logger);
  }

  /** Buffers one call's usage and returns at once: it never waits for, nor touches, the database, and never throws. */
  record(entry: UsageEntry): void {
    try {
      if (this.closed) {
        if (!this.droppedAfterClose) this.logger.warn('usage recorded after close() is dropped (logged once)');
        this.droppedAfterClose = true;
        this.counts.dropped += 1;
        return;
      }
      const row = usageRowOf(entry);
      if ('refused' in row) {
        this.counts.refused += 1;
        this.logger.warn({ reason: row.refused }, 'usage record refused');
        return;
      }
      observeInference(entry);
      this.buffer.push(row);
      this.counts.recorded += 1;
      if (this.buffer.length > this.maxBuffered) {
        const over = this.buffer.length - this.maxBuffered;
        this.buffer.splice(0, over);
        this.counts.dropped += over;
        this.droppedSinceLog += over;
      }
      this.arm();
    } catch (error) {
      this.logger.error({ err: error }, 'usage record failed');
    }
  }

  /** Writes everything buffered now (waiting for a flush under way first). */
  async flush(): Promise<void> {
    while (this.inFlight || this.buffer.length) await (this.inFlight ?? this.drain());
  }

  /** Stops taking records and writes what is buffered; call before the ORM closes. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    this.disarm();
  }

  stats(): UsageRecorderStats {
    return { ...this.counts, pending: this.buffer.length };
  }

  /** A flush right after this turn of the event loop once a batch is full, else a timer from the batch's first record. */
  private arm(): void {
    if (!this.buffer.length || this.inFlight) return;
    if (this.buffer.length >= this.batchSize) {
      this.immediate ??= setImmediate(() => {
        this.immediate = null;
        void this.drain();
      });
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.drain();
      }, this.flushIntervalMs);
      // Pending usage does not keep a process alive; close() writes it.
      this.timer.unref();
    }
  }

  private disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
  }

  /** One flush at a time; it goes on while full batches wait, then re-arms for the rest. */
  private drain(): Promise<void> {
    this.inFlight ??= (async () => {
      try {
        do {
          this.disarm();
          const batch = this.buffer;
          this.buffer = [];
          await this.write(batch);
        } while (this.buffer.length >= this.batchSize);
      } catch (error) {
        // write() handles the database's failures; this is for anything else, which must not become an unhandled rejection.
        this.logger.error({ err: error }, 'usage flush failed');
      } finally {
        this.inFlight = null;
        this.arm();
      }
    })();
    return this.inFlight;
  }

  private async write(batch: UsageRow[]): Promise<void> {
    if (this.droppedSinceLog) {
      this.logger.warn({ dropped: this.droppedSinceLog, maxBuffered: this.maxBuffered }, 'usage buffer full: oldest records dropped');
      this.droppedSinceLog = 0;
    }
    if (!batch.length) return;
    try {
      await this.insert(batch);
    } catch (first) {
      this.logger.warn({ err: first, records: batch.length }, 'usage flush failed; trying once more');
      await new Promise((resolve) => setTimeout(resolve, this.retryDelayMs));
      try {
        await this.insert(batch);
      } catch (second) {
        this.counts.lost += batch.length;
        this.logger.error({ err: second, lost: batch.length }, 'usage flush failed twice: records lost');
        return;
      }
    }
    this.counts.written += batch.length;
  }

  private async insert(batch: UsageRow[]): Promise<void> {
    this.counts.flushes += 1;
    await this.partitions.ensure(batch.map((row) => row.occurred_at));
    await this.orm.em.getConnection().execute(INSERT, [JSON.stringify(batch)], 'run');
  }
}
