import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mode } from '../core/principal.js';

/** One aggregated cell of the edge's usage counts, as flushed. */
export interface UsageCell {
  accountId: string;
  mode: Mode;
  /** Epoch milliseconds at the start of the minute. */
  minute: number;
  method: string;
  path: string;
  status: number;
  count: number;
  totalMs: number;
  maxMs: number;
}

export type UsageRange = 'hour' | 'day';
export const RANGE_MINUTES: Record<UsageRange, number> = { hour: 60, day: 1440 };
/** Rows older than the longest range (and a margin) are pruned. */
export const USAGE_RETENTION_MS = (RANGE_MINUTES.day + 60) * 60_000;

export interface UsageReport {
  series: { minute: string; requests: number; rateLimited: number; clientErrors: number; serverErrors: number }[];
  byStatus: { status: number; count: number }[];
  slowestPaths: { method: string; path: string; count: number; avgMs: number; maxMs: number }[];
}

// A batch's parameters stay well under PostgreSQL's 65535.
const CELLS_PER_STATEMENT = 1000;

/** The per-minute usage table (identity.usage_minute): batched upserts, the dashboard's report, pruning. */
export class UsageService {
  constructor(private readonly em: EntityManager) {}

  /** Adds cells to the stored counts: one upsert statement per thousand cells. */
  async add(cells: readonly UsageCell[]): Promise<void> {
    const connection = this.em.getConnection();
    for (let start = 0; start < cells.length; start += CELLS_PER_STATEMENT) {
      const batch = cells.slice(start, start + CELLS_PER_STATEMENT);
      const values: unknown[] = [];
      const rows = batch.map((cell) => {
        values.push(cell.accountId, cell.mode, new Date(cell.minute), cell.method, cell.path, cell.status, cell.count, cell.totalMs, cell.maxMs);
        return '(?, ?, ?, ?, ?, ?, ?, ?, ?)';
      });
      await connection.execute(
        `insert into "identity"."usage_minute" ("account_id", "mode", "minute", "method", "path", "status", "count", "total_ms", "max_ms")
         values ${rows.join(', ')}
         on conflict ("account_id", "mode", "minute", "method", "path", "status") do update set
           "count" = "usage_minute"."count" + excluded."count",
           "total_ms" = "usage_minute"."total_ms" + excluded."total_ms",
           "max_ms" = greatest("usage_minute"."max_ms", excluded."max_ms")`,
        values,
      );
    }
  }

  /** The account's usage in one mode over the last hour or day, minute by minute (zeros included), oldest first. */
  async report(accountId: string, mode: Mode, range: UsageRange, now = Date.now()): Promise<UsageReport> {
    const minutes = RANGE_MINUTES[range];
    const last = Math.floor(now / 60_000) * 60_000;
    const since = new Date(last - (minutes - 1) * 60_000);
    const connection = this.em.getConnection();
    const perMinute = await connection.execute<{ minute: Date; requests: string; rate_limited: string; client_errors: string; server_errors: string }[]>(
      `select "minute", sum("count") as requests,
              sum(case when "status" = 429 then "count" else 0 end) as rate_limited,
              sum(case when "status" between 400 and 499 and "status" <> 429 then "count" else 0 end) as client_errors,
              sum(case when "status" >= 500 then "count" else 0 end) as server_errors
         from "identity"."usage_minute" where "account_id" = ? and "mode" = ? and "minute" >= ?
        group by "minute"`,
      [accountId, mode, since],
    );
    const byMinute = new Map(perMinute.map((row) => [new Date(row.minute).getTime(), row]));
    const series = Array.from({ length: minutes }, (_, index) => {
      const minute = since.getTime() + index * 60_000;
      const row = byMinute.get(minute);
      return {
        minute: new Date(minute).toISOString(),
        requests: Number(row?.requests ?? 0),
        rateLimited: Number(row?.rate_limited ?? 0),
        clientErrors: Number(row?.client_errors ?? 0),
        serverErrors: Number(row?.server_errors ?? 0),
      };
    });
    const byStatus = await connection.execute<{ status: number; count: string }[]>(
      `select "status", sum("count") as count from "identity"."usage_minute"
        where "account_id" = ? and "mode" = ? and "minute" >= ? group by "status" order by "status"`,
      [accountId, mode, since],
    );
    const slowest = await connection.execute<{ method: string; path: string; count: string; total: number; max: number }[]>(
      `select "method", "path", sum("count") as count, sum("total_ms") as total, max("max_ms") as max from "identity"."usage_minute"
        where "account_id" = ? and "mode" = ? and "minute" >= ? group by "method", "path"
        order by sum("total_ms") / sum("count") desc, "method", "path" limit 10`,
      [accountId, mode, since],
    );
    return {
      series,
      byStatus: byStatus.map((row) => ({ status: Number(row.status), count: Number(row.count) })),
      slowestPaths: slowest.map((row) => ({
        method: row.method,
        path: row.path,
        count: Number(row.count),
        avgMs: Math.round((Number(row.total) / Number(row.count)) * 10) / 10,
        maxMs: Math.round(Number(row.max) * 10) / 10,
      })),
    };
  }

  /** Deletes the rows no range shows any more. */
  prune(now = Date.now()): Promise<number> {
    return this.em.getConnection().execute(`delete from "identity"."usage_minute" where "minute" < ?`, [new Date(now - USAGE_RETENTION_MS)], 'run').then((result) => (result as { affectedRows?: number }).affectedRows ?? 0);
  }
}
