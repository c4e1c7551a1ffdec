import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeTimeCursor, encodeTimeCursor } from '../../shared/cursor.js';
import { DomainError } from '../../../core/errors.js';
import { UUID } from '../../shared/pagination.js';
import { sharedIpEnricher } from '../enrichment/ip-enricher.js';
import { readTextRecords } from '../ingest/record-reader.js';
import { TraceImporter, type ImportReport } from '../ingest/trace-importer.js';
import { timeOfUuidV7 } from '../../shared/uuid-v7.js';
import { Trace } from './trace.entity.js';
import { SourceRecordNotKeptError } from './trace.errors.js';
import type { TraceRecordType } from './trace-record.type.js';
import { TraceSource } from './trace-source.js';
import { traceFilter } from './trace-filter.js';
import { DEFAULT_SEARCH_HOURS, DEFAULT_STATS_HOURS, DEFAULT_TRACE_PAGE_SIZE, MAX_OFFSET } from './trace-limits.js';
import type { TracesArgs, TraceStatsArgs } from './trace.inputs.js';
import type { TracePage } from './trace-page.js';
import type { TraceStatsType } from './trace-stats.type.js';

/** The largest content the GraphQL import accepts: the request body limit of the edge and the subgraph (1 MB) binds first anyway; bigger files go through the command-line tool. */
export const MAX_IMPORT_CONTENT = 1024 * 1024;

/** Every column but hops, which a search reads only with includeHops. */
export const SUMMARY_COLUMNS = `t.id, t.measured_at, t.measurement_key, t.source, t.msm_id, t.probe_id, t.direction, t.status, t.af,
  t.protocol, t.probe_ip, t.probe_city, t.probe_country, t.probe_asn, t.probe_as_name, t.probe_lat, t.probe_lon,
  t.target_domain, t.target_ip, t.target_city, t.target_country, t.target_asn, t.target_as_name, t.target_lat, t.target_lon,
  t.hop_count, t.responding_hops, t.loss, t.rtt_ms, t.as_path, t.anomaly_score, t.anomaly, t.error, t.stop_reason, t.provenance, t.created_at`;

type Row = Record<string, unknown>;

/** A row of `traceroute.trace` as the GraphQL Trace. */
export function traceFromRow(row: Row): Trace {
  const parse = <T>(value: unknown): T => (typeof value === 'string' ? JSON.parse(value) : value) as T;
  return Object.assign(new Trace(), {
    id: row.id,
    measuredAt: new Date(row.measured_at as string),
    measurementKey: row.measurement_key,
    source: row.source,
    msmId: row.msm_id,
    probeId: row.probe_id,
    direction: row.direction,
    status: row.status,
    af: row.af,
    protocol: row.protocol,
    probeIp: row.probe_ip,
    probeCity: row.probe_city,
    probeCountry: row.probe_country,
    probeAsn: row.probe_asn,
    probeAsName: row.probe_as_name,
    probeLat: row.probe_lat,
    probeLon: row.probe_lon,
    targetDomain: row.target_domain,
    targetIp: row.target_ip,
    targetCity: row.target_city,
    targetCountry: row.target_country,
    targetAsn: row.target_asn,
    targetAsName: row.target_as_name,
    targetLat: row.target_lat,
    targetLon: row.target_lon,
    hopCount: row.hop_count,
    respondingHops: row.responding_hops,
    loss: row.loss,
    rttMs: row.rtt_ms,
    asPath: row.as_path,
    anomalyScore: row.anomaly_score,
    anomaly: parse(row.anomaly),
    error: row.error ?? null,
    stopReason: row.stop_reason ?? null,
    provenance: row.provenance === null || row.provenance === undefined ? null : parse(row.provenance),
    hops: row.hops === undefined ? null : parse(row.hops),
    createdAt: new Date(row.created_at as string),
  });
}

function encodeCursor(trace: Trace): string {
  return encodeTimeCursor(trace.measuredAt, trace.id);
}

function decodeCursor(cursor: string): { measuredAt: Date; id: string } {
  const position = decodeTimeCursor(cursor);
  if (!position) throw new DomainError('BAD_USER_INPUT', 'The cursor is not one this API issued', { param: 'cursor', reason: 'invalid_parameter' });
  return { measuredAt: position.at, id: position.id };
}

/** Traceroute measurements. They are public research data, so no query is scoped to an account. */
export class TraceService {
  constructor(private readonly em: EntityManager) {}

  private execute(sql: string, params: unknown[]): Promise<Row[]> {
    return this.em.getConnection().execute<Row[]>(sql, params, 'all');
  }

  /**
   * The search: filters on the trace row's columns, newest measurement first with the id as
   * tie-breaker. `page` is an offset (capped at MAX_OFFSET rows); `cursor` is a keyset seek,
   * as cheap at any depth as the first page.
   */
  async list(args: TracesArgs): Promise<TracePage> {
    const limit = args.limit ?? DEFAULT_TRACE_PAGE_SIZE;
    const page = args.page ?? 1;
    if (args.cursor && page !== 1) {
      throw new DomainError('BAD_USER_INPUT', 'page and cursor cannot be combined', { param: 'page', reason: 'invalid_parameter' });
    }
    if ((page - 1) * limit >= MAX_OFFSET) {
      throw new DomainError('BAD_USER_INPUT', `page × limit must stay within ${MAX_OFFSET} results; follow nextCursor to go deeper`, {
        param: 'page',
        reason: 'invalid_parameter',
      });
    }
    const filter = traceFilter(args, DEFAULT_SEARCH_HOURS);
    let where = filter.where;
    const params = [...filter.params];
    if (args.cursor) {
      const cursor = decodeCursor(args.cursor);
      // A row comparison is a range condition on the (measured_at desc, id desc) index.
      where += ' and (t.measured_at, t.id) < (?, ?)';
      params.push(cursor.measuredAt, cursor.id);
    }
    const rows = await this.execute(
      `select ${SUMMARY_COLUMNS}${args.includeHops ? ', t.hops' : ''} from "traceroute"."trace" t where ${where}
       order by t.measured_at desc, t.id desc limit ? offset ?`,
      [...params, limit + 1, args.cursor ? 0 : (page - 1) * limit],
    );
    const data = rows.slice(0, limit).map(traceFromRow);
    const hasMore = rows.length > limit;
    return { data, page, limit, hasMore, nextCursor: hasMore ? encodeCursor(data[data.length - 1]) : null };
  }

  /** One trace with its hops, or null when the id is unknown or not a uuid. */
  async find(id: string): Promise<Trace | null> {
    return (await this.findMany([id]))[0];
  }

  /**
   * Many traces in one statement, in the order of `ids` (null where unknown). A UUIDv7 names its
   * measurement time, so its lookup prunes to one partition.
   */
  async findMany(ids: readonly string[]): Promise<(Trace | null)[]> {
    // A UUIDv7 past year 9999 names no stored trace (none is measured then), and PostgreSQL could not read its time.
    const valid = [...new Set(ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))].filter(
      (id) => (timeOfUuidV7(id)?.getUTCFullYear() ?? 0) <= 9999,
    );
    if (!valid.length) return ids.map(() => null);
    const keys = valid.map((id) => ({ id, at: timeOfUuidV7(id)?.toISOString() ?? null }));
    const rows = await this.execute(
      `select ${SUMMARY_COLUMNS}, t.hops from jsonb_to_recordset(?::jsonb) as k(id uuid, at timestamptz)
       join "traceroute"."trace" t on t.id = k.id and (k.at is null or t.measured_at = k.at)`,
      [JSON.stringify(keys)],
    );
    const byId = new Map(rows.map((row) => [String(row.id), traceFromRow(row)]));
    return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
  }

  /**
   * The source record of a trace, exactly as imported; null for an unknown id, and a refusal
   * (SourceRecordNotKeptError) for a trace without one.
   */
  async record(id: string): Promise<TraceRecordType | null> {
    if (!UUID.test(id)) return null;
    // A UUIDv7 names its measurement time, so the lookup reaches one partition (as findMany's).
    const at = timeOfUuidV7(id);
    if (at && at.getUTCFullYear() > 9999) return null;
    const [row] = await this.execute(
      `select t.id, t.source, t.source_record from "traceroute"."trace" t where t.id = ?${at ? ' and t.measured_at = ?' : ''}`,
      [id.toLowerCase(), ...(at ? [at] : [])],
    );
    if (!row) return null;
    if (row.source_record === null) throw new SourceRecordNotKeptError(String(row.id), row.source === TraceSource.SYNTHETIC);
    return { traceId: String(row.id), source: String(row.source), record: String(row.source_record) };
  }

  /** Counts over the traces the search's filters find in a window of measurement time (default the last 24 hours). */
  async stats(args: TraceStatsArgs): Promise<TraceStatsType> {
    const { where, params, since, until } = traceFilter(args, DEFAULT_STATS_HOURS);
    const grouped = (key: string) =>
      this.execute(`select ${key} as key, count(*)::int as count from "traceroute"."trace" t where ${where} group by 1 order by 2 desc, 1`, params);
    const [byDirection, byStatus, anomaly, asns, probeCities, targetCities, hours] = await Promise.all([
      grouped('t.direction'),
      grouped('t.status'),
      this.execute(
        `select least(floor(t.anomaly_score * 10), 9)::int as bucket, count(*)::int as count from "traceroute"."trace" t where ${where} group by 1`,
        params,
      ),
      this.execute(
        `select t.probe_asn as asn, max(t.probe_as_name) as as_name, count(*)::int as count from "traceroute"."trace" t
         where ${where} and t.probe_asn is not null group by 1 order by 3 desc, 1 limit 10`,
        params,
      ),
      this.execute(
        `select t.probe_city as city, max(t.probe_country) as country, count(*)::int as count from "traceroute"."trace" t
         where ${where} and t.probe_city is not null group by 1 order by 3 desc, 1 limit 10`,
        params,
      ),
      this.execute(
        `select t.target_city as city, max(t.target_country) as country, count(*)::int as count from "traceroute"."trace" t
         where ${where} and t.target_city is not null group by 1 order by 3 desc, 1 limit 10`,
        params,
      ),
      this.execute(`select date_trunc('hour', t.measured_at) as hour, count(*)::int as count from "traceroute"."trace" t where ${where} group by 1 order by 1`, params),
    ]);
    const buckets = new Map(anomaly.map((r) => [Number(r.bucket), Number(r.count)]));
    const counts = (rows: Row[]) => rows.map((r) => ({ key: String(r.key), count: Number(r.count) }));
    return {
      since,
      until,
      total: byStatus.reduce((sum, r) => sum + Number(r.count), 0),
      byDirection: counts(byDirection),
      byStatus: counts(byStatus),
      anomalyDistribution: Array.from({ length: 10 }, (_, i) => ({
        key: `${(i / 10).toFixed(1)}-${((i + 1) / 10).toFixed(1)}`,
        count: buckets.get(i) ?? 0,
      })),
      topAsns: asns.map((r) => ({ asn: Number(r.asn), asName: (r.as_name as string) ?? null, count: Number(r.count) })),
      topProbeCities: probeCities.map((r) => ({ city: String(r.city), country: (r.country as string) ?? null, count: Number(r.count) })),
      topTargetCities: targetCities.map((r) => ({ city: String(r.city), country: (r.country as string) ?? null, count: Number(r.count) })),
      perHour: hours.map((r) => ({ hour: new Date(r.hour as string), count: Number(r.count) })),
    };
  }

  /** Imports RIPE Atlas or scamper2 content given as text (at most MAX_IMPORT_CONTENT bytes); admin keys only (the resolver's `@Authorized`). */
  async import(content: string): Promise<ImportReport> {
    if (Buffer.byteLength(content, 'utf8') > MAX_IMPORT_CONTENT) {
      throw new DomainError('BAD_USER_INPUT', `content is larger than ${MAX_IMPORT_CONTENT / 1024 / 1024} MiB; use the command-line import`, {
        param: 'content',
        reason: 'invalid_parameter',
      });
    }
    return new TraceImporter(this.em, await sharedIpEnricher()).run(readTextRecords(content));
  }
}
