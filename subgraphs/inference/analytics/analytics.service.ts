import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeUsageCursor, encodeUsageCursor, numberOrNull, USAGE_COLUMNS, usageRecordFromRow } from '../usage/usage-row.js';
import { InvalidCursorError, UUID } from '../../shared/pagination.js';
import { UsageInterface } from '../usage/usage-interface.js';
import { DEFAULT_USAGE_PAGE_SIZE } from '../usage/usage-limits.js';
import { UsageRecord } from '../usage/usage-record.entity.js';
import type { UsageRecordPage } from '../usage/usage-record-page.js';
import { checkedWindow } from '../usage/usage.service.js';
import { AnalyticsBucket, checkedBucket } from './analytics-bucket.js';
import type { AnalyticsScope } from './analytics-scope.js';
import { histogramPercentiles, latencyBucketSql, type Histogram } from './latency-histogram.js';
import type { ModelPerformance } from './model-performance.js';
import type { UsageStatistic } from './usage-statistic.js';
import type { UsageStatistics } from './usage-statistics.js';

type Row = Record<string, unknown>;

/** The most usage statistics rows one answer carries (buckets x providers x models x interfaces). */
export const MAX_STATISTICS_ROWS = 10_000;
/** The most provider and model pairs a performance answer carries. */
export const MAX_PERFORMANCE_ROWS = 1000;

/** What every analytics query is narrowed by: the range (from inclusive, to exclusive) and optional filters. */
export interface AnalyticsFilter {
  from: Date;
  to: Date;
  provider?: string | null;
  model?: string | null;
  interface?: UsageInterface | null;
}

export interface HistoryFilter extends AnalyticsFilter {
  limit?: number | null;
  after?: string | null;
}

const HOUR_MS = 3_600_000;
/** Buckets as date_bin intervals from a UTC midnight: whole UTC minutes, hours and days, with no time zone lookup per row. */
const BUCKET_INTERVAL: Record<AnalyticsBucket, string> = { minute: '1 minute', hour: '1 hour', day: '1 day' };
const UTC_ORIGIN = "timestamptz '2000-01-01 00:00:00+00'";

const ratio = (part: number, whole: number) => (whole ? part / whole : 0);

/** Ranges with more calls than this get performance from the histograms (within 1%), fewer the exact percentiles. */
export const DEFAULT_EXACT_PERCENTILE_LIMIT = 100_000;

const DAY_MS = 24 * HOUR_MS;

/** The whole UTC hours [firstHour, lastHour) of a range and the whole UTC days [firstDay, lastDay) inside them. */
interface WholeSpans {
  firstHour: Date;
  lastHour: Date;
  firstDay: Date;
  lastDay: Date;
}

function wholeSpans(from: Date, to: Date): WholeSpans {
  const firstHour = Math.ceil(from.getTime() / HOUR_MS) * HOUR_MS;
  const lastHour = Math.max(firstHour, Math.floor(to.getTime() / HOUR_MS) * HOUR_MS);
  let firstDay = Math.ceil(firstHour / DAY_MS) * DAY_MS;
  let lastDay = Math.floor(lastHour / DAY_MS) * DAY_MS;
  // No whole day: the hours cover it all, from the first edge's hours.
  if (firstDay >= lastDay) firstDay = lastDay = lastHour;
  return { firstHour: new Date(firstHour), lastHour: new Date(lastHour), firstDay: new Date(firstDay), lastDay: new Date(lastDay) };
}

/** A performance entry from a row of sums (calls, succeeded, server_errors, tokens, token_ms) and its percentiles. */
function performanceOf(row: Row, latencyP50Ms: number | null, latencyP95Ms: number | null, timeToFirstTokenP50Ms: number | null): ModelPerformance {
  const calls = Number(row.calls);
  const serverErrors = Number(row.server_errors);
  const tokens = Number(row.tokens ?? 0);
  const tokenMs = Number(row.token_ms ?? 0);
  return {
    provider: row.provider as string,
    model: row.model as string,
    calls,
    succeeded: Number(row.succeeded),
    serverErrors,
    errorRate: ratio(serverErrors, calls),
    latencyP50Ms,
    latencyP95Ms,
    timeToFirstTokenP50Ms,
    // A call of 0 ms that produced tokens (a cached answer) would divide by zero: no figure then.
    completionTokensPerSecond: tokens > 0 && tokenMs > 0 ? (tokens * 1000) / tokenMs : null,
  };
}

/** The history's cursor: the usage lists' own, so a page of either continues in the other. */
export const decodeHistoryCursor = decodeUsageCursor;


/**
 * Usage statistics, model performance and call history over `inference.usage_record`. Every
 * statement starts from an `occurred_at` range given as values (not expressions), so the planner
 * prunes the monthly partitions outside it; each answer is one statement (percentiles included:
 * an array percentile_cont sorts once for p50 and p95), whatever the number of groups.
 */
export class AnalyticsService {
  constructor(
    private readonly em: EntityManager,
    /** Past this many calls in a range, performance reads the histograms instead of sorting records. */
    private readonly exactPercentileLimit = DEFAULT_EXACT_PERCENTILE_LIMIT,
  ) {}

  private execute(sql: string, params: unknown[]): Promise<Row[]> {
    return this.em.getConnection().execute<Row[]>(sql, params, 'all');
  }

  /** The range, filter and scope conditions; the range is checked (at most 90 days) here. */
  private where(scope: AnalyticsScope, filter: AnalyticsFilter): { sql: string[]; params: unknown[] } {
    const { from, to } = checkedWindow(filter);
    const sql = ['u.occurred_at >= ?', 'u.occurred_at < ?'];
    const params: unknown[] = [from, to];
    for (const [column, value] of [['interface', filter.interface], ['provider', filter.provider], ['model', filter.model]] as const) {
      if (value == null) continue;
      sql.push(`u.${column} = ?`);
      params.push(value);
    }
    if (scope.kind === 'account') {
      // Keyless records have no account, so no account scope ever matches them.
      if (!UUID.test(scope.accountId)) sql.push('false');
      else {
        sql.push('u.account_id = ?');
        params.push(scope.accountId);
      }
    } else if (scope.kind === 'address') {
      sql.push('u.client_address = ?');
      params.push(scope.address);
    }
    return { sql, params };
  }

  /**
   * Calls, tokens and errors per time bucket, provider, model and interface; empty buckets are
   * left out. Over every call, hour and day buckets read the hourly sums for the whole hours of
   * the range and the records only for its ragged edges; minute buckets and scoped statistics
   * read the records (one account's through its index).
   */
  async usage(scope: AnalyticsScope, filter: AnalyticsFilter, bucket?: AnalyticsBucket | null): Promise<UsageStatistics> {
    const { sql, params } = this.where(scope, filter);
    const width = checkedBucket(filter.from, filter.to, bucket);
    const firstHour = Math.ceil(filter.from.getTime() / HOUR_MS) * HOUR_MS;
    const lastHour = Math.floor(filter.to.getTime() / HOUR_MS) * HOUR_MS;
    const bin = (column: string) => `date_bin('${BUCKET_INTERVAL[width]}', ${column}, ${UTC_ORIGIN})`;
    let rows: Row[];
    if (scope.kind === 'all' && width !== AnalyticsBucket.MINUTE && firstHour < lastHour) {
      const hours = ['h.hour >= ?', 'h.hour < ?'];
      const hourParams: unknown[] = [new Date(firstHour), new Date(lastHour)];
      const edges: unknown[] = [filter.from, new Date(firstHour), new Date(lastHour), filter.to];
      for (const [column, value] of [['interface', filter.interface], ['provider', filter.provider], ['model', filter.model]] as const) {
        if (value == null) continue;
        hours.push(`h.${column} = ?`);
        hourParams.push(value);
      }
      // The record conditions without the range (its first two), for the two edges.
      const rest = sql.slice(2).map((condition) => ` and ${condition}`).join('');
      const restParams = params.slice(2);
      const edge = `select u.occurred_at as at, u.provider, u.model, u.interface, 1 as calls, (u.status >= 400)::int as errors, u.prompt_tokens, u.completion_tokens, u.images
        from "inference"."usage_record" u where u.occurred_at >= ? and u.occurred_at < ?${rest}`;
      rows = await this.execute(
        `select ${bin('t.at')} as bucket_start, t.provider, t.model, t.interface,
           sum(t.calls) as calls, sum(t.errors) as errors, sum(t.prompt_tokens) as prompt_tokens, sum(t.completion_tokens) as completion_tokens, sum(t.images) as images
         from (
           select h.hour as at, h.provider, h.model, h.interface, h.calls, h.errors, h.prompt_tokens, h.completion_tokens, h.images
             from "inference"."usage_hour" h where ${hours.join(' and ')}
           union all ${edge}
           union all ${edge}
         ) t
         group by 1, 2, 3, 4 order by 1, 2, 3, 4 limit ?`,
        [...hourParams, edges[0], edges[1], ...restParams, edges[2], edges[3], ...restParams, MAX_STATISTICS_ROWS + 1],
      );
    } else {
      rows = await this.execute(
        `select ${bin('u.occurred_at')} as bucket_start, u.provider, u.model, u.interface,
           count(*) as calls,
           count(*) filter (where u.status >= 400) as errors,
           coalesce(sum(u.prompt_tokens), 0)::bigint as prompt_tokens,
           coalesce(sum(u.completion_tokens), 0)::bigint as completion_tokens,
           coalesce(sum(u.images), 0)::bigint as images
         from "inference"."usage_record" u where ${sql.join(' and ')}
         group by 1, 2, 3, 4 order by 1, 2, 3, 4 limit ?`,
        [...params, MAX_STATISTICS_ROWS + 1],
      );
    }
    const data = rows.slice(0, MAX_STATISTICS_ROWS).map((row): UsageStatistic => {
      const calls = Number(row.calls);
      const errors = Number(row.errors);
      return {
        bucketStart: new Date(row.bucket_start as string),
        provider: row.provider as string,
        model: row.model as string,
        interface: row.interface as UsageInterface,
        calls,
        promptTokens: Number(row.prompt_tokens),
        completionTokens: Number(row.completion_tokens),
        totalTokens: Number(row.prompt_tokens) + Number(row.completion_tokens),
        images: Number(row.images ?? 0),
        errors,
        errorRate: ratio(errors, calls),
      };
    });
    return { bucket: width, data, truncated: rows.length > MAX_STATISTICS_ROWS };
  }

  /**
   * Latency percentiles, time to first token, throughput and error rate per provider and model,
   * most calls first. Exact (percentile_cont over the records) up to `exactPercentileLimit` calls
   * in the range; past it, over every call and every interface, from the hourly sums and the
   * latency histograms (within 1%, latency-histogram.ts), so that no answer sorts millions of rows.
   */
  async performance(scope: AnalyticsScope, filter: AnalyticsFilter): Promise<ModelPerformance[]> {
    const { from, to } = checkedWindow(filter);
    const spans = wholeSpans(from, to);
    if (scope.kind === 'all' && filter.interface == null && spans.lastHour > spans.firstHour && (await this.callsInWholeHours(filter, spans)) > this.exactPercentileLimit) {
      return this.performanceFromHistograms(filter, spans);
    }
    const { sql, params } = this.where(scope, filter);
    const rows = await this.execute(
      `select u.provider, u.model,
         count(*) as calls,
         count(*) filter (where u.status < 400) as succeeded,
         count(*) filter (where u.status >= 500) as server_errors,
         percentile_cont(array[0.5, 0.95]::float8[]) within group (order by u.latency_ms) filter (where u.status < 400) as latency,
         percentile_cont(0.5) within group (order by u.time_to_first_token_ms) filter (where u.status < 400) as ttft_p50,
         sum(u.completion_tokens) filter (where u.status < 400 and u.completion_tokens > 0) as tokens,
         sum(u.latency_ms) filter (where u.status < 400 and u.completion_tokens > 0) as token_ms
       from "inference"."usage_record" u where ${sql.join(' and ')}
       group by 1, 2 order by calls desc, 1, 2 limit ?`,
      [...params, MAX_PERFORMANCE_ROWS],
    );
    return rows.map((row): ModelPerformance => {
      const latency = (row.latency as (number | string)[] | null) ?? null;
      return performanceOf(row, latency ? numberOrNull(latency[0]) : null, latency ? numberOrNull(latency[1]) : null, numberOrNull(row.ttft_p50));
    });
  }

  /** Calls of the whole hours of the range, from the hourly sums: whether exact percentiles stay cheap. */
  private async callsInWholeHours(filter: AnalyticsFilter, spans: WholeSpans): Promise<number> {
    const { sql, params } = this.hourConditions('h', 'hour', filter, spans.firstHour, spans.lastHour);
    const [row] = await this.execute(`select coalesce(sum(h.calls), 0) as calls from "inference"."usage_hour" h where ${sql.join(' and ')}`, params);
    return Number(row?.calls ?? 0);
  }

  /** A time range and the provider and model filters on a table of sums. */
  private hourConditions(alias: string, column: string, filter: AnalyticsFilter, from: Date, to: Date): { sql: string[]; params: unknown[] } {
    const sql = [`${alias}.${column} >= ?`, `${alias}.${column} < ?`];
    const params: unknown[] = [from, to];
    for (const [name, value] of [['provider', filter.provider], ['model', filter.model]] as const) {
      if (value == null) continue;
      sql.push(`${alias}.${name} = ?`);
      params.push(value);
    }
    return { sql, params };
  }

  /**
   * Performance over every call from the sums: whole days from the daily histograms, whole hours
   * at either end from the hourly ones, and the records only for the ragged minutes at the edges.
   */
  private async performanceFromHistograms(filter: AnalyticsFilter, spans: WholeSpans): Promise<ModelPerformance[]> {
    const { from, to } = filter;
    const { firstHour, lastHour, firstDay, lastDay } = spans;
    const part = (alias: string, column: string, start: Date, end: Date) => this.hourConditions(alias, column, filter, start, end);
    const hours = part('h', 'hour', firstHour, lastHour);
    const edges = [part('u', 'occurred_at', from, firstHour), part('u', 'occurred_at', lastHour, to)];
    const edgeSums = `select u.provider, u.model, 1 as calls, (u.status >= 400)::int as errors, (u.status >= 500)::int as server_errors,
        case when u.status < 400 and u.completion_tokens > 0 then u.completion_tokens else 0 end as generation_tokens,
        case when u.status < 400 and u.completion_tokens > 0 then u.latency_ms else 0 end as generation_ms
      from "inference"."usage_record" u where `;
    const sums = await this.execute(
      `select t.provider, t.model, sum(t.calls) as calls, sum(t.calls) - sum(t.errors) as succeeded, sum(t.server_errors) as server_errors,
         sum(t.generation_tokens) as tokens, sum(t.generation_ms) as token_ms
       from (
         select h.provider, h.model, h.calls, h.errors, h.server_errors, h.generation_tokens, h.generation_ms
           from "inference"."usage_hour" h where ${hours.sql.join(' and ')}
         union all ${edgeSums}${edges[0]!.sql.join(' and ')}
         union all ${edgeSums}${edges[1]!.sql.join(' and ')}
       ) t group by 1, 2`,
      [...hours.params, ...edges[0]!.params, ...edges[1]!.params],
    );
    const days = part('d', 'day', firstDay, lastDay);
    const hourEdges = [part('l', 'hour', firstHour, firstDay), part('l', 'hour', lastDay, lastHour)];
    const edgeBuckets = `select u.provider, u.model, m.metric, m.bucket, 1 as calls
      from "inference"."usage_record" u cross join lateral (values (0::smallint, ${latencyBucketSql('u.latency_ms')}), (1::smallint, ${latencyBucketSql('u.time_to_first_token_ms')})) as m(metric, bucket)
      where u.status < 400 and m.bucket is not null and `;
    const buckets = await this.execute(
      `select t.provider, t.model, t.metric, t.bucket, sum(t.calls) as calls
       from (
         select d.provider, d.model, d.metric, d.bucket, d.calls from "inference"."usage_latency_day" d where ${days.sql.join(' and ')}
         union all select l.provider, l.model, l.metric, l.bucket, l.calls from "inference"."usage_latency_hour" l where ${hourEdges[0]!.sql.join(' and ')}
         union all select l.provider, l.model, l.metric, l.bucket, l.calls from "inference"."usage_latency_hour" l where ${hourEdges[1]!.sql.join(' and ')}
         union all ${edgeBuckets}${edges[0]!.sql.join(' and ')}
         union all ${edgeBuckets}${edges[1]!.sql.join(' and ')}
       ) t group by 1, 2, 3, 4 order by 1, 2, 3, 4`,
      [...days.params, ...hourEdges[0]!.params, ...hourEdges[1]!.params, ...edges[0]!.params, ...edges[1]!.params],
    );
    const histograms = new Map<string, [Histogram, Histogram]>();
    for (const row of buckets) {
      const key = `${row.provider as string}\u0000${row.model as string}`;
      let pair = histograms.get(key);
      if (!pair) histograms.set(key, (pair = [[], []]));
      pair[Number(row.metric)]!.push({ bucket: Number(row.bucket), calls: Number(row.calls) });
    }
    return sums
      .map((row): ModelPerformance => {
        const [latency, ttft] = histograms.get(`${row.provider as string}\u0000${row.model as string}`) ?? [[], []];
        const [p50, p95] = histogramPercentiles(latency, [0.5, 0.95]);
        return performanceOf(row, p50!, p95!, histogramPercentiles(ttft, [0.5])[0]!);
      })
      .filter((entry) => entry.calls > 0)
      .sort((a, b) => b.calls - a.calls || a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model))
      .slice(0, MAX_PERFORMANCE_ROWS);
  }

  /** Calls in the range, newest first, keyset-paged by (occurred_at, id) like inferenceUsage. */
  async history(scope: AnalyticsScope, filter: HistoryFilter): Promise<UsageRecordPage> {
    const limit = filter.limit ?? DEFAULT_USAGE_PAGE_SIZE;
    const { sql, params } = this.where(scope, filter);
    if (filter.after) {
      const cursor = decodeUsageCursor(filter.after);
      // A row comparison is a range condition on the (occurred_at, id) order of every index, read backwards.
      // The plain bound beside it lets the planner prune the partitions after the cursor.
      sql.push('u.occurred_at <= ?', '(u.occurred_at, u.id) < (?, ?)');
      params.push(cursor.occurredAt, cursor.occurredAt, cursor.id);
    }
    const rows = await this.execute(
      `select ${USAGE_COLUMNS} from "inference"."usage_record" u where ${sql.join(' and ')} order by u.occurred_at desc, u.id desc limit ?`,
      [...params, limit + 1],
    );
    const data = rows.slice(0, limit).map(usageRecordFromRow);
    const hasMore = rows.length > limit;
    return { data, limit, hasMore, nextCursor: hasMore ? encodeUsageCursor(data[data.length - 1]) : null };
  }
}
