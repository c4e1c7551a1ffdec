import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, Response } from 'express';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { sendApiError, tracerouteErrorFormat, type ApiError } from '../../../rest-bridge/errors.js';
import { DomainError } from '../../shared/errors.js';
import { traceFilter } from '../trace/trace-filter.js';
import { TraceDirection } from '../trace/trace-direction.js';
import { TraceStatus } from '../trace/trace-status.js';
import { MAX_HOURS, type TraceFilterArgs } from '../trace/trace.inputs.js';

export const DEFAULT_EXPORT_LIMIT = 1000;
export const MAX_EXPORT_LIMIT = 10_000;
export const DEFAULT_EXPORT_HOURS = 24;

/** The CSV columns, in order; `hops` (the hop list as JSON text) only with include_hops. */
export const CSV_COLUMNS: [string, string][] = [
  ['trace_id', 't.id'], ['measured_at', `to_char(t.measured_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`],
  ['direction', 't.direction'], ['status', 't.status'], ['probe_id', 't.probe_id'], ['probe_ip', 't.probe_ip'],
  ['probe_city', 't.probe_city'], ['probe_country', 't.probe_country'], ['probe_asn', 't.probe_asn'], ['probe_as_name', 't.probe_as_name'],
  ['target_domain', 't.target_domain'], ['target_ip', 't.target_ip'], ['target_city', 't.target_city'], ['target_country', 't.target_country'],
  ['target_asn', 't.target_asn'], ['target_as_name', 't.target_as_name'], ['hop_count', 't.hop_count'], ['responding_hops', 't.responding_hops'],
  ['loss', 't.loss'], ['rtt_ms', 't.rtt_ms'], ['as_path', `array_to_string(t.as_path, ' ')`], ['anomaly_score', 't.anomaly_score'],
];

export interface ExportQuery {
  format: 'json' | 'csv';
  limit: number;
  includeHops: boolean;
  filter: TraceFilterArgs & { hours: number };
}

const bad = (param: string, message: string) => new DomainError('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });

function integer(query: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw bad(name, `${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return Number(raw);
}

function date(query: URLSearchParams, name: string): Date | null {
  const raw = query.get(name);
  if (raw === null) return null;
  const value = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(value.getTime())) throw bad(name, `${name} must be an ISO date-time, got "${raw}"`);
  return value;
}

function oneOf<T extends string>(query: URLSearchParams, name: string, values: readonly T[]): T | null {
  const raw = query.get(name);
  if (raw === null) return null;
  if (!(values as readonly string[]).includes(raw)) throw bad(name, `${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** Reads and checks the export's query parameters: the spec's, plus the search filters. */
export function parseExportQuery(query: URLSearchParams): ExportQuery {
  const minAnomaly = query.get('min_anomaly');
  if (minAnomaly !== null && !(minAnomaly.trim() !== '' && Number(minAnomaly) >= 0 && Number(minAnomaly) <= 1)) {
    throw bad('min_anomaly', `min_anomaly must be a number from 0.0 to 1.0, got "${minAnomaly}"`);
  }
  const includeHops = oneOf(query, 'include_hops', ['true', 'false'] as const);
  const probeAsn = query.get('probe_asn');
  if (probeAsn !== null && !/^\d{1,10}$/.test(probeAsn)) throw bad('probe_asn', `probe_asn must be an integer, got "${probeAsn}"`);
  const targetIp = query.get('target_ip');
  const text = (name: string, max: number) => {
    const value = query.get(name);
    if (value !== null && (value.length < 1 || value.length > max || value.includes('\0'))) throw bad(name, `${name} must be 1 to ${max} characters`);
    return value;
  };
  return {
    format: oneOf(query, 'format', ['json', 'csv'] as const) ?? 'json',
    limit: integer(query, 'limit', 1, MAX_EXPORT_LIMIT, DEFAULT_EXPORT_LIMIT),
    includeHops: includeHops === null ? true : includeHops === 'true',
    filter: {
      hours: integer(query, 'hours', 1, MAX_HOURS, DEFAULT_EXPORT_HOURS),
      direction: oneOf(query, 'direction', Object.values(TraceDirection)),
      status: oneOf(query, 'status', Object.values(TraceStatus)),
      min_anomaly: minAnomaly === null ? null : Number(minAnomaly),
      probe_asn: probeAsn === null ? null : Number(probeAsn),
      probe_city: text('probe_city', 200),
      probe_country: text('probe_country', 2),
      target_domain: text('target_domain', 253),
      target_ip: targetIp,
      target_city: text('target_city', 200),
      since: date(query, 'since'),
      until: date(query, 'until'),
    },
  };
}

/** The export's SELECT with its values inlined as literals: COPY takes no bind parameters. */
export function exportSql(query: ExportQuery): string {
  const filter = traceFilter(query.filter, DEFAULT_EXPORT_HOURS);
  let i = 0;
  const where = filter.where.replace(/\?/g, () => {
    const value = filter.params[i++];
    if (value instanceof Date) return `'${value.toISOString()}'::timestamptz`;
    if (typeof value === 'number') return String(value);
    return pg.Client.prototype.escapeLiteral(String(value));
  });
  const rows = `select * from "traceroute"."trace" t where ${where} order by t.measured_at desc, t.id desc limit ${query.limit}`;
  if (query.format === 'csv') {
    const columns = [...CSV_COLUMNS, ...(query.includeHops ? [['hops', 't.hops::text'] as [string, string]] : [])];
    return `copy (select ${columns.map(([name, sql]) => `${sql} as "${name}"`).join(', ')} from (${rows}) t) to stdout with (format csv, header)`;
  }
  // Each row is one line of JSON; the separator rides on the row so the stream needs no lookahead.
  const object = `jsonb_build_object(
    'trace_id', t.id, 'measured_at', t.measured_at, 'direction', t.direction, 'status', t.status, 'af', t.af, 'protocol', t.protocol,
    'msm_id', t.msm_id, 'probe_id', t.probe_id, 'probe_ip', t.probe_ip, 'probe_city', t.probe_city, 'probe_country', t.probe_country,
    'probe_asn', t.probe_asn, 'probe_as_name', t.probe_as_name, 'probe_latitude', t.probe_lat, 'probe_longitude', t.probe_lon,
    'target_domain', t.target_domain, 'target_ip', t.target_ip, 'target_city', t.target_city, 'target_country', t.target_country,
    'target_asn', t.target_asn, 'target_as_name', t.target_as_name, 'target_latitude', t.target_lat, 'target_longitude', t.target_lon,
    'hop_count', t.hop_count, 'responding_hops', t.responding_hops, 'loss', t.loss, 'rtt_ms', t.rtt_ms, 'as_path', t.as_path,
    'anomaly_score', t.anomaly_score, 'anomaly', t.anomaly, 'created_at', t.created_at)${query.includeHops ? ` || jsonb_build_object('hops', t.hops)` : ''}`;
  // CSV format with a quote and delimiter that JSON text never contains passes each line through untouched.
  return `copy (select case when row_number() over () > 1 then ',' else '' end || (${object})::text from (${rows}) t)
    to stdout with (format csv, delimiter e'\\x02', quote e'\\x01')`;
}

/** Drops the newline after each JSON row; rows already carry their separating comma. */
function jsonArrayBody(): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, Buffer.from(chunk.toString('utf8').replace(/\n/g, '')));
    },
  });
}

/**
 * GET <base>/traces/export: the filtered traces as JSON (`{"data":[...]}`) or CSV, streamed from
 * PostgreSQL's COPY through the HTTP response with backpressure: memory stays flat whatever the
 * export's size. Other paths go to `next`. Mount it after the traceroute key guard.
 */
export function createTraceExportHandler(options: { basePath: string; databaseUrl: string; poolMax?: number }) {
  let pool: pg.Pool | undefined;
  const path = `${options.basePath}/traces/export`;
  const fail = (req: Request, res: Response, error: ApiError) => sendApiError(res, tracerouteErrorFormat, error, String(req.id));

  const handler = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (req.path !== path && req.path !== `${path}/`) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET');
      return fail(req, res, { status: 405, code: 'method_not_allowed', message: `${req.method} is not allowed on ${req.path}; use GET` });
    }
    let query: ExportQuery;
    try {
      query = parseExportQuery(new URL(req.originalUrl, 'http://export').searchParams);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return fail(req, res, { status: 400, code: 'invalid_parameter', message: error.message, param: String(error.extensions.param) });
    }
    pool ??= new pg.Pool({ connectionString: options.databaseUrl, max: options.poolMax ?? 4 });
    const client = await pool.connect();
    try {
      const copy = client.query(copyTo(exportSql(query)));
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      res.status(200);
      res.setHeader('content-type', query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
      res.setHeader('content-disposition', `attachment; filename="traces-${stamp}.${query.format}"`);
      if (query.format === 'json') {
        res.write('{"data":[');
        await pipeline(copy, jsonArrayBody(), res, { end: false });
        res.end(']}');
      } else {
        await pipeline(copy, res);
      }
    } catch (error) {
      // Once the body has started, the status is sent: the client sees a truncated body.
      if (!res.headersSent) return fail(req, res, { status: 500, code: 'internal_error', message: 'An internal error occurred' });
      req.log?.error({ err: error }, 'trace export failed mid-stream');
      res.destroy(error as Error);
    } finally {
      client.release();
    }
  };
  return Object.assign(
    (req: Request, res: Response, next: NextFunction) => void handler(req, res, next).catch(next),
    { close: async () => pool?.end() },
  );
}
