import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, Response } from 'express';
import { validateSync } from 'class-validator';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { abortChunkedResponse, closedByClient, forwardTo } from '../../../core/http-stream.js';
import { DomainError } from '../../../core/errors.js';
import { traceFilterWithin, windowOf } from '../trace/trace-filter.js';
import { TraceDirection } from '../trace/trace-direction.js';
import { TraceStatus } from '../trace/trace-status.js';
import { DEFAULT_EXPORT_HOURS, DEFAULT_EXPORT_LIMIT, MAX_EXPORT_LIMIT, MAX_HOURS } from '../trace/trace-limits.js';
import { TraceFilterArgs } from '../trace/trace.inputs.js';

/** The CSV columns, in order; `hops` (the hop list as JSON text) only with include_hops. */
export const CSV_COLUMNS: [string, string][] = [
  ['trace_id', 't.id'], ['measured_at', `to_char(t.measured_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`],
  ['direction', 't.direction'], ['status', 't.status'], ['probe_id', 't.probe_id'], ['probe_ip', 't.probe_ip'],
  ['probe_city', 't.probe_city'], ['probe_country', 't.probe_country'], ['probe_asn', 't.probe_asn'], ['probe_as_name', 't.probe_as_name'],
  ['target_domain', 't.target_domain'], ['target_ip', 't.target_ip'], ['target_city', 't.target_city'], ['target_country', 't.target_country'],
  ['target_asn', 't.target_asn'], ['target_as_name', 't.target_as_name'], ['hop_count', 't.hop_count'], ['responding_hops', 't.responding_hops'],
  ['loss', 't.loss'], ['rtt_ms', 't.rtt_ms'], ['as_path', `array_to_string(t.as_path, ' ')`], ['anomaly_score', 't.anomaly_score'],
  ['error', 't.error'], ['stop_reason', 't.stop_reason'],
];

/** The query parameter each filter property is read from (the names of GET /traces). */
const QUERY_NAME = {
  direction: 'direction',
  status: 'status',
  minAnomaly: 'min_anomaly',
  probeAsn: 'probe_asn',
  probeCity: 'probe_city',
  probeCountry: 'probe_country',
  targetDomain: 'target_domain',
  targetIp: 'target_ip',
  targetCity: 'target_city',
  since: 'since',
  until: 'until',
} as const satisfies Partial<Record<keyof TraceFilterArgs, string>>;

/** A refusal of the export, before its first byte. */
interface Problem {
  status: number;
  code: string;
  message: string;
  param?: string;
}

/**
 * Refusals leave as RFC 9457 problem details, the platform's internal error shape: the edge
 * renders them in the traceroute interface's own error body (each interface's body lives there).
 */
function sendProblem(req: Request, res: Response, problem: Problem): void {
  res
    .status(problem.status)
    .type('application/problem+json')
    .send(JSON.stringify({ status: problem.status, code: problem.code, detail: problem.message, ...(problem.param ? { param: problem.param } : {}), request_id: String(req.id) }));
}

export interface ExportQuery {
  format: 'json' | 'csv';
  limit: number;
  includeHops: boolean;
  filter: TraceFilterArgs;
  /** The measurement-time window, worked out (and checked) once, while the query is read. */
  window: { since: Date; until: Date };
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

/**
 * Reads and checks the export's query parameters (the spec's plus the search filters), all of
 * them before the first byte is sent: control characters anywhere, each value's type, and the
 * filters by the very rules of GET /traces (TraceFilterArgs), the window included.
 */
export function parseExportQuery(query: URLSearchParams): ExportQuery {
  for (const [name, value] of query) {
    // COPY takes no bind parameters, and PostgreSQL refuses NUL in text mid-statement.
    if (/[\u0000-\u001f\u007f]/.test(name + value)) throw bad(name, `${name} must not contain control characters`);
  }
  const minAnomaly = query.get('min_anomaly');
  if (minAnomaly !== null && !(minAnomaly.trim() !== '' && Number(minAnomaly) >= 0 && Number(minAnomaly) <= 1)) {
    throw bad('min_anomaly', `min_anomaly must be a number from 0.0 to 1.0, got "${minAnomaly}"`);
  }
  const includeHops = oneOf(query, 'include_hops', ['true', 'false'] as const);
  const probeAsn = query.get('probe_asn');
  // Its range is TraceFilterArgs' rule, checked below with the other filters.
  if (probeAsn !== null && !/^\d+$/.test(probeAsn)) throw bad('probe_asn', `probe_asn must be an integer, got "${probeAsn}"`);
  const filter = Object.assign(new TraceFilterArgs(), {
    direction: oneOf(query, 'direction', Object.values(TraceDirection)),
    status: oneOf(query, 'status', Object.values(TraceStatus)),
    minAnomaly: minAnomaly === null ? null : Number(minAnomaly),
    probeAsn: probeAsn === null ? null : Number(probeAsn),
    probeCity: query.get('probe_city'),
    probeCountry: query.get('probe_country'),
    targetDomain: query.get('target_domain'),
    targetIp: query.get('target_ip'),
    targetCity: query.get('target_city'),
    since: date(query, 'since'),
    until: date(query, 'until'),
  });
  const [problem] = validateSync(filter, { forbidUnknownValues: false });
  if (problem) {
    // The export's parameters are the search's (GET /traces), named as this route reads them.
    const name = QUERY_NAME[problem.property as keyof typeof QUERY_NAME] ?? problem.property;
    const message = Object.values(problem.constraints ?? {})[0] ?? `${problem.property} is not valid`;
    throw bad(name, message.replace(new RegExp(`\\b${problem.property}\\b`, 'g'), name));
  }
  const hours = integer(query, 'hours', 1, MAX_HOURS, DEFAULT_EXPORT_HOURS);
  // The window's own rules (since before until, dates PostgreSQL takes), checked now rather than when COPY is built.
  const window = windowOf({ ...filter, hours }, DEFAULT_EXPORT_HOURS);
  return {
    format: oneOf(query, 'format', ['json', 'csv'] as const) ?? 'json',
    limit: integer(query, 'limit', 1, MAX_EXPORT_LIMIT, DEFAULT_EXPORT_LIMIT),
    includeHops: includeHops === null ? true : includeHops === 'true',
    filter,
    window,
  };
}

/** The export's SELECT with its values inlined as literals: COPY takes no bind parameters. */
export function exportSql(query: ExportQuery): string {
  const filter = traceFilterWithin(query.filter, query.window);
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
    'anomaly_score', t.anomaly_score, 'anomaly', t.anomaly, 'error', t.error, 'stop_reason', t.stop_reason, 'created_at', t.created_at)${query.includeHops ? ` || jsonb_build_object('hops', t.hops)` : ''}`;
  // CSV format with a quote and delimiter that JSON text never contains passes each line through untouched.
  return `copy (select case when row_number() over () > 1 then ',' else '' end || (${object})::text from (${rows}) t)
    to stdout with (format csv, delimiter e'\\x02', quote e'\\x01')`;
}

/** Drops the newline after each JSON row (rows already carry their separating comma), counting rows. */
function jsonArrayBody(): Transform & { rows: number } {
  const counted = { rows: 0 };
  const body = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const text = chunk.toString('utf8');
      for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) counted.rows++;
      done(null, Buffer.from(text.replace(/\n/g, '')));
    },
  });
  return Object.defineProperty(body, 'rows', { get: () => counted.rows }) as Transform & { rows: number };
}

/**
 * GET <base>/traces/export: the filtered traces as JSON (`{"data":[...]}`) or CSV, streamed from
 * PostgreSQL's COPY through the HTTP response with backpressure: memory stays flat whatever the
 * export's size. Every parameter is checked before the first byte. Should the export fail after
 * it, a JSON body gets a last array element `{"error":"export_failed",...}` and is left
 * unterminated (no `]}`), and for both formats the chunked response is cut before its last
 * chunk. Other paths go to `next`. Mount it after the traceroute key guard.
 */
export function createTraceExportHandler(options: { basePath: string; databaseUrl: string; poolMax?: number }) {
  let pool: pg.Pool | undefined;
  const path = `${options.basePath}/traces/export`;
  const fail = sendProblem;
  const openPool = () => {
    const opened = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolMax ?? 4 });
    // An idle connection the server ends (a restart) must not crash the process; the next export reconnects.
    opened.on('error', () => undefined);
    return opened;
  };

  const handler = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (req.path !== path && req.path !== `${path}/`) return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET');
      return fail(req, res, { status: 405, code: 'method_not_allowed', message: `${req.method} is not allowed on ${req.path}; use GET` });
    }
    let query: ExportQuery;
    let sql: string;
    try {
      query = parseExportQuery(new URL(req.originalUrl, 'http://export').searchParams);
      sql = exportSql(query);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return fail(req, res, { status: 400, code: 'invalid_parameter', message: error.message, param: String(error.extensions.param) });
    }
    pool ??= openPool();
    const client = await pool.connect();
    let body: ReturnType<typeof jsonArrayBody> | undefined;
    try {
      const copy = client.query(copyTo(sql));
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      res.status(200);
      res.setHeader('content-type', query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
      res.setHeader('content-disposition', `attachment; filename="traces-${stamp}.${query.format}"`);
      if (query.format === 'json') {
        body = jsonArrayBody();
        res.write('{"data":[');
        await pipeline(copy, body, forwardTo(res));
        res.end(']}');
      } else {
        await pipeline(copy, forwardTo(res));
        res.end();
      }
      client.release();
    } catch (error) {
      client.release(error as Error);
      if (!res.headersSent) return fail(req, res, { status: 500, code: 'internal_error', message: 'An internal error occurred' });
      // A client that stops reading is no failure of the export: nobody is left to tell, nothing to fix.
      if (closedByClient(res)) return void req.log?.debug({ err: error }, 'trace export ended: the client closed the connection');
      req.log?.error({ err: error }, 'trace export failed mid-stream');
      if (body && !res.destroyed) {
        const record = { error: 'export_failed', message: `The export failed after ${body.rows} traces; this body is incomplete`, request_id: String(req.id) };
        res.write(`${body.rows ? ',' : ''}${JSON.stringify(record)}`);
      }
      abortChunkedResponse(res);
    }
  };
  return Object.assign(
    (req: Request, res: Response, next: NextFunction) => void handler(req, res, next).catch(next),
    { close: async () => pool?.end() },
  );
}
