import { Transform } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { pipeline } from 'node:stream/promises';
import type { NextFunction, Request, Response } from 'express';
import { validateSync } from 'class-validator';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { abortChunkedResponse, closedByClient, forwardTo } from '../../../core/http-stream.js';
import { DomainError } from '../../../core/errors.js';
import { decodeTimeCursor, encodeTimeCursor } from '../../shared/cursor.js';
import { traceFilterWithin, windowOf } from '../trace/trace-filter.js';
import { TraceDirection } from '../trace/trace-direction.js';
import { TraceProtocol } from '../trace/trace-protocol.js';
import { TraceStatus } from '../trace/trace-status.js';
import { DEFAULT_EXPORT_HOURS, DEFAULT_EXPORT_LIMIT, MAX_EXPORT_LIMIT, MAX_HOURS } from '../trace/trace-limits.js';
import { TraceFilterArgs } from '../trace/trace.inputs.js';

/** The CSV columns, in order; `hops` (the hop list as JSON text) only with include_hops. Times are ISO 8601 in UTC with milliseconds, as everywhere in the API. */
export const CSV_COLUMNS: [string, string][] = [
  ['trace_id', 't.id'], ['measured_at', isoTime('t.measured_at')], ['msm_id', 't.msm_id'], ['probe_id', 't.probe_id'], ['af', 't.af'],
  ['protocol', 't.protocol'], ['direction', 't.direction'], ['status', 't.status'], ['probe_ip', 't.probe_ip'],
  ['probe_city', 't.probe_city'], ['probe_country', 't.probe_country'], ['probe_asn', 't.probe_asn'], ['probe_as_name', 't.probe_as_name'],
  ['target_domain', 't.target_domain'], ['target_ip', 't.target_ip'], ['target_city', 't.target_city'], ['target_country', 't.target_country'],
  ['target_asn', 't.target_asn'], ['target_as_name', 't.target_as_name'], ['hop_count', 't.hop_count'], ['responding_hops', 't.responding_hops'],
  ['loss', 't.loss'], ['rtt_ms', 't.rtt_ms'], ['as_path', `array_to_string(t.as_path, ' ')`], ['anomaly_score', 't.anomaly_score'],
  ['error', 't.error'], ['stop_reason', 't.stop_reason'],
];

/** A timestamp as the GraphQL DateTime writes it (JavaScript's toISOString): `2021-04-22T19:10:21.000Z`. */
function isoTime(column: string): string {
  return `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** Header naming the cursor of the next page of a CSV export (a JSON export carries it in its body). */
export const NEXT_CURSOR_HEADER = 'x-next-cursor';

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
  /** Where the previous page ended: the export continues after it, as the search's cursor does. */
  after: { measuredAt: Date; id: string } | null;
}

const bad = (param: string, message: string) => new DomainError('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });

/** A REST name of the graph's camelCase one, as tracerouteRestName names the search's parameters. */
const restName = (property: string) => property.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

type Reader = (raw: string, name: string) => unknown;
const text: Reader = (raw) => raw;
// Ranges are TraceFilterArgs' rules, checked with the other filters; here only the type.
const integer: Reader = (raw, name) => {
  if (!/^-?\d{1,10}$/.test(raw)) throw bad(name, `${name} must be an integer, got "${raw}"`);
  return Number(raw);
};
const oneOf =
  (values: readonly string[]): Reader =>
  (raw, name) => {
    if (!values.includes(raw)) throw bad(name, `${name} must be one of ${values.join(', ')}, got "${raw}"`);
    return raw;
  };
const date: Reader = (raw, name) => {
  const value = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(value.getTime())) throw bad(name, `${name} must be an ISO date-time, got "${raw}"`);
  return value;
};
const anomaly: Reader = (raw, name) => {
  if (!(raw.trim() !== '' && Number(raw) >= 0 && Number(raw) <= 1)) throw bad(name, `${name} must be a number from 0.0 to 1.0, got "${raw}"`);
  return Number(raw);
};

/** Every filter of the search, read from its REST name: a filter added to TraceFilterArgs must be added here. */
const FILTERS: { [K in keyof TraceFilterArgs]-?: Reader } = {
  direction: oneOf(Object.values(TraceDirection)),
  status: oneOf(Object.values(TraceStatus)),
  probeCity: text,
  probeCountry: text,
  probeAsn: integer,
  targetDomain: text,
  targetIp: text,
  targetCity: text,
  minAnomaly: anomaly,
  msmId: integer,
  probeId: integer,
  af: integer,
  protocol: oneOf(Object.values(TraceProtocol)),
  targetAsn: integer,
  hopIp: text,
  hopAsn: integer,
  since: date,
  until: date,
};
/** The export's own parameters beside the filters. */
const OWN = ['format', 'limit', 'include_hops', 'hours', 'cursor'] as const;
const FILTER_BY_NAME = new Map(Object.keys(FILTERS).map((property) => [restName(property), property as keyof TraceFilterArgs]));
const TAKES = [...OWN, ...FILTER_BY_NAME.keys()];

function bounded(query: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw bad(name, `${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return Number(raw);
}

/**
 * Reads and checks the export's query parameters (its own and every filter of GET /traces, by the
 * same REST names), all of them before the first byte is sent: unknown or repeated parameters,
 * control characters anywhere, each value's type, and the filters by the very rules of the search
 * (TraceFilterArgs), the window and the cursor included.
 */
export function parseExportQuery(query: URLSearchParams): ExportQuery {
  const seen = new Set<string>();
  for (const [name, value] of query) {
    // COPY takes no bind parameters, and PostgreSQL refuses NUL in text mid-statement.
    if (/[\u0000-\u001f\u007f]/.test(name + value)) throw bad(name, `${name} must not contain control characters`);
    if (!(TAKES as string[]).includes(name)) {
      throw new DomainError('BAD_USER_INPUT', `Received unknown parameter: ${name} (GET /traces/export takes ${TAKES.join(', ')})`, { param: name, reason: 'unknown_parameter' });
    }
    if (seen.has(name)) throw bad(name, `${name} was given ${query.getAll(name).length} times; it takes one value`);
    seen.add(name);
  }
  const filter = new TraceFilterArgs();
  for (const [name, property] of FILTER_BY_NAME) {
    const raw = query.get(name);
    if (raw !== null) Object.assign(filter, { [property]: FILTERS[property](raw, name) });
  }
  const includeHops = query.get('include_hops');
  if (includeHops !== null) oneOf(['true', 'false'])(includeHops, 'include_hops');
  const [problem] = validateSync(filter, { forbidUnknownValues: false });
  if (problem) {
    // The export's parameters are the search's (GET /traces), named as this route reads them.
    const name = restName(problem.property);
    const message = Object.values(problem.constraints ?? {})[0] ?? `${problem.property} is not valid`;
    throw bad(name, message.replace(new RegExp(`\\b${problem.property}\\b`, 'g'), name));
  }
  const hours = bounded(query, 'hours', 1, MAX_HOURS, DEFAULT_EXPORT_HOURS);
  // The window's own rules (since before until, dates PostgreSQL takes), checked now rather than when COPY is built.
  const window = windowOf({ ...filter, hours }, DEFAULT_EXPORT_HOURS);
  const cursor = query.get('cursor');
  const position = cursor === null ? null : decodeTimeCursor(cursor);
  if (position === undefined) throw bad('cursor', 'The cursor is not one this API issued');
  return {
    format: (oneOf(['json', 'csv'])(query.get('format') ?? 'json', 'format') as 'json' | 'csv'),
    limit: bounded(query, 'limit', 1, MAX_EXPORT_LIMIT, DEFAULT_EXPORT_LIMIT),
    includeHops: includeHops === null ? true : includeHops === 'true',
    filter,
    window,
    after: position && { measuredAt: position.at, id: position.id },
  };
}

/** The export's WHERE with its values inlined as literals: COPY takes no bind parameters. */
function whereOf(query: ExportQuery): string {
  const filter = traceFilterWithin(query.filter, query.window);
  const params = [...filter.params, ...(query.after ? [query.after.measuredAt, query.after.id] : [])];
  // A row comparison is a range condition on the (measured_at desc, id desc) index, as in the search.
  const sql = query.after ? `${filter.where} and (t.measured_at, t.id) < (?, ?::uuid)` : filter.where;
  let i = 0;
  return sql.replace(/\?/g, () => {
    const value = params[i++];
    if (value instanceof Date) return `'${value.toISOString()}'::timestamptz`;
    if (typeof value === 'number') return String(value);
    return pg.Client.prototype.escapeLiteral(String(value));
  });
}

const ORDER = 'order by t.measured_at desc, t.id desc';

/**
 * The export's COPY statement. JSON selects one row past the limit and writes it as the line `+`
 * only: the stream then knows there is more without a second query.
 */
export function exportSql(query: ExportQuery): string {
  const where = whereOf(query);
  if (query.format === 'csv') {
    const rows = `select * from "traceroute"."trace" t where ${where} ${ORDER} limit ${query.limit}`;
    const columns = [...CSV_COLUMNS, ...(query.includeHops ? [['hops', 't.hops::text'] as [string, string]] : [])];
    return `copy (select ${columns.map(([name, sql]) => `${sql} as "${name}"`).join(', ')} from (${rows}) t ${ORDER}) to stdout with (format csv, header)`;
  }
  const rows = `select * from "traceroute"."trace" t where ${where} ${ORDER} limit ${query.limit + 1}`;
  // Each row is one line of JSON; the separator rides on the row so the stream needs no lookahead.
  const object = `jsonb_build_object(
    'trace_id', t.id, 'measured_at', ${isoTime('t.measured_at')}, 'direction', t.direction, 'status', t.status, 'af', t.af, 'protocol', t.protocol,
    'msm_id', t.msm_id, 'probe_id', t.probe_id, 'probe_ip', t.probe_ip, 'probe_city', t.probe_city, 'probe_country', t.probe_country,
    'probe_asn', t.probe_asn, 'probe_as_name', t.probe_as_name, 'probe_latitude', t.probe_lat, 'probe_longitude', t.probe_lon,
    'target_domain', t.target_domain, 'target_ip', t.target_ip, 'target_city', t.target_city, 'target_country', t.target_country,
    'target_asn', t.target_asn, 'target_as_name', t.target_as_name, 'target_latitude', t.target_lat, 'target_longitude', t.target_lon,
    'hop_count', t.hop_count, 'responding_hops', t.responding_hops, 'loss', t.loss, 'rtt_ms', t.rtt_ms, 'as_path', t.as_path,
    'anomaly_score', t.anomaly_score, 'anomaly', t.anomaly, 'error', t.error, 'stop_reason', t.stop_reason, 'provenance', t.provenance, 'created_at', ${isoTime('t.created_at')})${query.includeHops ? ` || jsonb_build_object('hops', t.hops)` : ''}`;
  // CSV format with a quote and delimiter that JSON text never contains passes each line through untouched.
  return `copy (select case when t.n > ${query.limit} then '+' when t.n > 1 then ',' || (${object})::text else (${object})::text end
    from (select t.*, row_number() over (${ORDER}) as n from (${rows}) t) t order by t.n)
    to stdout with (format csv, delimiter e'\\x02', quote e'\\x01')`;
}

/**
 * For a CSV export: the last row of its page and whether another follows (two rows from the
 * limit-th on). Run in the COPY's snapshot, so the cursor names exactly the last row sent.
 */
export function exportNextSql(query: ExportQuery): string {
  return `select t.measured_at, t.id from "traceroute"."trace" t where ${whereOf(query)} ${ORDER} offset ${query.limit - 1} limit 2`;
}

/**
 * The JSON rows between `{"data":[` and the closing fields: drops the newline after each row
 * (rows carry their separating comma), holds back the `+` line that says more rows follow, and
 * keeps the last row to name the next page's cursor.
 */
function jsonArrayBody(): Transform & { rows: number; more: boolean; last: string } {
  const decoder = new StringDecoder('utf8');
  const state = { rows: 0, more: false, last: '', line: '', marker: false };
  const body = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let out = '';
      for (const part of decoder.write(chunk).split(/(\n)/)) {
        if (part === '\n') {
          if (state.marker) state.more = true;
          else (state.rows++, (state.last = state.line));
          state.line = '';
          state.marker = false;
        } else if (part) {
          if (!state.line && part.startsWith('+')) state.marker = true;
          state.line += part;
          if (!state.marker) out += part;
        }
      }
      done(null, out);
    },
  });
  return Object.defineProperties(body, {
    rows: { get: () => state.rows },
    more: { get: () => state.more },
    last: { get: () => state.last },
  }) as Transform & { rows: number; more: boolean; last: string };
}

/** The cursor after an exported JSON row (its text, with or without its leading comma). */
function cursorAfter(row: string): string {
  const trace = JSON.parse(row.replace(/^,/, '')) as { measured_at: string; trace_id: string };
  return encodeTimeCursor(new Date(trace.measured_at), trace.trace_id);
}

/**
 * GET <base>/traces/export: the filtered traces as JSON (`{"data":[...],"hasMore","nextCursor"}`)
 * or CSV (the next page's cursor in X-Next-Cursor), streamed from PostgreSQL's COPY through the
 * HTTP response with backpressure: memory stays flat whatever the export's size. `cursor`
 * continues where a page ended, past any number of rows. Every parameter is checked before the
 * first byte. Should the export fail after it, a JSON body gets a last array element
 * `{"error":"export_failed",...}` and is left unterminated (no `]`), and for both formats the
 * chunked response is cut before its last chunk. Other paths go to `next`. Mount it after the
 * traceroute key guard.
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
      const code = String(error.extensions.reason ?? 'invalid_parameter');
      return fail(req, res, { status: 400, code, message: error.message, param: String(error.extensions.param) });
    }
    pool ??= openPool();
    const client = await pool.connect();
    let body: ReturnType<typeof jsonArrayBody> | undefined;
    try {
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      res.status(200);
      res.setHeader('content-type', query.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8');
      res.setHeader('content-disposition', `attachment; filename="traces-${stamp}.${query.format}"`);
      if (query.format === 'json') {
        body = jsonArrayBody();
        res.write('{"data":[');
        await pipeline(client.query(copyTo(sql)), body, forwardTo(res));
        const next = body.more ? cursorAfter(body.last) : null;
        res.end(`],"hasMore":${next !== null},"nextCursor":${JSON.stringify(next)}}`);
      } else {
        // CSV has no place after its rows for the cursor: a header names it, read in the COPY's snapshot.
        await client.query('begin isolation level repeatable read read only');
        const { rows } = await client.query<{ measured_at: Date; id: string }>(exportNextSql(query));
        if (rows.length === 2) res.setHeader(NEXT_CURSOR_HEADER, encodeTimeCursor(rows[0].measured_at, rows[0].id));
        await pipeline(client.query(copyTo(sql)), forwardTo(res));
        await client.query('commit');
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
