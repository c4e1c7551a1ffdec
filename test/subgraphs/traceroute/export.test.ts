import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../../identity/index.js';
import { LocalKeyStore } from '../../../identity/local-key-store.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { sharedIpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';
import { createTraceExportHandler, CSV_COLUMNS } from '../../../subgraphs/traceroute/export/trace-export.handler.js';
import { createTracerouteSubgraph } from '../../../subgraphs/traceroute/index.js';
import { SyntheticTraceGenerator } from '../../../subgraphs/traceroute/ingest/synthetic-generator.js';
import { TraceImporter } from '../../../subgraphs/traceroute/ingest/trace-importer.js';
import { exportCutMidStream } from '../../support/cut-export.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;
let server: http.Server;
let base: string;
let handler: ReturnType<typeof createTraceExportHandler>;
/** What the handler logged, by level (a stand-in for the request's req.log, core/request-log.ts). */
const logged: { level: string; message: string; err?: unknown }[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  subgraph = await createTracerouteSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, keyStore: new LocalKeyStore(identityOrm) });
  const generator = new SyntheticTraceGenerator(await sharedIpEnricher(), 3);
  // 1,500 over two days: the default 24-hour window holds about half.
  await new TraceImporter(subgraph.orm.em.fork(), await sharedIpEnricher()).store(generator.generate(1500, { days: 2 }));
  handler = createTraceExportHandler({ basePath: '/v1/public', databaseUrl: db.url });
  const app = express();
  app.use((req, _res, next) => {
    (req as unknown as { id: string }).id = 'req_test';
    const record = (level: string) => (fields: { err?: unknown }, message: string) => logged.push({ level, message, err: fields.err });
    (req as unknown as { log: object }).log = { error: record('error'), warn: record('warn'), info: record('info'), debug: record('debug') };
    next();
  });
  app.use(handler);
  app.use((_req, res) => void res.status(404).end());
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/public/traces/export`;
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await handler?.close();
  await subgraph?.close();
  await identityOrm?.close(true);
  await db?.drop();
});

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\n') row.push(field), rows.push(row), (row = []), (field = '');
    else field += c;
  }
  return rows;
}

describe('GET /v1/public/traces/export', () => {
  it('answers JSON by default: the last 24 hours, newest first, hops included', async () => {
    const response = await fetch(base);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const body = (await response.json()) as { data: { trace_id: string; measured_at: string; hops: unknown[]; anomaly: object }[] };
    expect(body.data.length).toBeGreaterThan(500);
    expect(body.data.length).toBeLessThanOrEqual(1000);
    const since = Date.now() - 24 * 3_600_000 - 60_000;
    expect(body.data.every((t) => Date.parse(t.measured_at) >= since)).toBe(true);
    const times = body.data.map((t) => Date.parse(t.measured_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(body.data.every((t) => Array.isArray(t.hops) && t.hops.length > 0 && 'rtt_inflation' in t.anomaly)).toBe(true);
  });

  it('answers CSV with the documented columns, hops as JSON text, limit and filters applied', async () => {
    const response = await fetch(`${base}?format=csv&limit=50&direction=pk_to_outside&min_anomaly=0.05&hours=48`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/csv');
    const [header, ...rows] = parseCsv(await response.text());
    expect(header).toEqual([...CSV_COLUMNS.map(([name]) => name), 'hops']);
    expect(rows).toHaveLength(50);
    for (const row of rows) {
      expect(row[header.indexOf('direction')]).toBe('pk_to_outside');
      expect(Number(row[header.indexOf('anomaly_score')])).toBeGreaterThanOrEqual(0.05);
      expect(Array.isArray(JSON.parse(row[header.indexOf('hops')]))).toBe(true);
    }
  });

  it('leaves the hops out with include_hops=false and allows up to 10,000 traces', async () => {
    const json = (await (await fetch(`${base}?include_hops=false&hours=48&limit=10000`)).json()) as { data: object[] };
    expect(json.data).toHaveLength(1500);
    expect(json.data.every((t) => !('hops' in t))).toBe(true);
    const csv = await (await fetch(`${base}?format=csv&include_hops=false&limit=1`)).text();
    expect(parseCsv(csv)[0]).not.toContain('hops');
  });

  it.each([
    ['format', 'format=xml'], ['limit', 'limit=10001'], ['limit', 'limit=0'], ['limit', 'limit=ten'], ['hours', 'hours=721'],
    ['min_anomaly', 'min_anomaly=2'], ['direction', 'direction=sideways'], ['include_hops', 'include_hops=yes'], ['since', 'since=yesterday'],
  ])('answers 400 invalid_parameter naming %s', async (param, query) => {
    const response = await fetch(`${base}?${query}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: 400, code: 'invalid_parameter', param, request_id: 'req_test' });
  });

  it.each([
    ['target_ip', 'target_ip=%00'], ['target_ip', 'target_ip=not-an-ip'], ['target_ip', 'target_ip=300.1.1.1'],
    ['target_domain', 'target_domain=dawn%00.com'], ['target_city', 'target_city=Lahore%01'], ['probe_city', 'probe_city=%7F'],
    ['format', 'format=csv%0A'], ['probe_country', 'probe_country=PAK'], ['probe_asn', 'probe_asn=99999999999'],
    ['since', 'since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z'], ['junk%00', 'junk%00=1'],
    ['since', 'since=0000-01-01T00:00:00Z'],
  ])('checks every parameter before the first byte: 400 invalid_parameter naming %s', async (param, query) => {
    const response = await fetch(`${base}?${query}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ status: 400, code: 'invalid_parameter', param: decodeURIComponent(param), request_id: 'req_test' });
  });

  it.each([
    ['probe_asn', 'probe_asn=2147483648', 'probe_asn must not be greater than 2147483647'],
    ['probe_country', 'probe_country=PAK', 'probe_country must be a two-letter country code'],
    ['min_anomaly', 'min_anomaly=1.5', 'min_anomaly must be a number from 0.0 to 1.0, got "1.5"'],
  ])("refuses %s by the search's own rule (TraceFilterArgs), named in the message as REST names it", async (param, query, message) => {
    const response = await fetch(`${base}?${query}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'invalid_parameter', param, detail: message });
  });

  it('takes the largest ASN the search takes', async () => {
    const response = await fetch(`${base}?format=csv&probe_asn=2147483647`);
    expect(response.status).toBe(200);
    expect(parseCsv(await response.text())).toHaveLength(1);
  });

  it('ends a body that fails after its first byte detectably: a trailing error record and no last chunk', async () => {
    logged.length = 0;
    const { status, body, complete } = await exportCutMidStream(db.url, `${base}?hours=48`);
    expect(logged.map(({ level, message }) => `${level}: ${message}`)).toEqual(['error: trace export failed mid-stream']);
    expect(status).toBe(200);
    expect(complete).toBe(false);
    expect(body.startsWith('{"data":[')).toBe(true);
    expect(() => JSON.parse(body)).toThrow();
    expect(JSON.parse(body.slice('{"data":['.length))).toEqual({
      error: 'export_failed',
      message: 'The export failed after 0 traces; this body is incomplete',
      request_id: 'req_test',
    });
    // The pool recovers: the next export is whole.
    const after = await fetch(`${base}?format=csv&limit=3`);
    expect(after.status).toBe(200);
    expect(parseCsv(await after.text())).toHaveLength(4);
  });

  it('logs a client that leaves mid-stream at debug, not as a failed export', async () => {
    logged.length = 0;
    const { status, body } = await exportCutMidStream(db.url, `${base}?hours=48`, {}, 'client');
    expect(status).toBe(200);
    expect(body.startsWith('{"data":[')).toBe(true);
    for (let i = 0; i < 100 && logged.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(logged.map(({ level, message }) => `${level}: ${message}`)).toEqual(['debug: trace export ended: the client closed the connection']);
    // The pool recovers: the next export is whole.
    const after = await fetch(`${base}?format=csv&limit=3`);
    expect(parseCsv(await after.text())).toHaveLength(4);
  });

  it('quotes filter values safely into the COPY statement', async () => {
    const response = await fetch(`${base}?format=csv&target_domain=${encodeURIComponent("x'); drop table traceroute.trace; --")}`);
    expect(response.status).toBe(200);
    expect(parseCsv(await response.text())).toHaveLength(1);
    const count = await subgraph.orm.em.getConnection().execute('select count(*)::int as n from "traceroute"."trace"');
    expect(count[0].n).toBe(1500);
  });
});

describe('the columns, filters and cursor researchers need', () => {
  const reader = principalFor('reader', 'traceroute');
  const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
  type Row = Record<string, any>;

  /** The search's answer for the same filters: the trace ids, newest first. */
  async function searched(filters: Record<string, unknown>): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | null = null;
    const names = Object.keys(filters);
    const types: Record<string, string> = { msmId: 'Int', probeId: 'Int', af: 'Int', protocol: 'TraceProtocol', hopAsn: 'Int', hopIp: 'String', targetAsn: 'Int', hours: 'Int', direction: 'TraceDirection' };
    do {
      const result: any = await run(subgraph, reader, `query(${names.map((n) => `$${n}: ${types[n]}`).join(', ')}, $cursor: String) {
        traces(${names.map((n) => `${n}: $${n}`).join(', ')}, cursor: $cursor, limit: 200) { data { traceId } nextCursor } }`, { ...filters, cursor });
      expect(result.errors).toBeUndefined();
      ids.push(...result.data.traces.data.map((t: Row) => t.traceId));
      cursor = result.data.traces.nextCursor;
    } while (cursor);
    return ids;
  }

  it('writes msm_id, probe_id, af and protocol in CSV, and every time in one format', async () => {
    const csv = parseCsv(await (await fetch(`${base}?format=csv&include_hops=false&limit=20`)).text());
    const [header, ...rows] = csv;
    expect(header.slice(0, 6)).toEqual(['trace_id', 'measured_at', 'msm_id', 'probe_id', 'af', 'protocol']);
    const json = ((await (await fetch(`${base}?include_hops=false&limit=20`)).json()) as { data: Row[] }).data;
    for (const [i, row] of rows.entries()) {
      const trace = json[i];
      expect(row.slice(0, 6)).toEqual([trace.trace_id, trace.measured_at, String(trace.msm_id), String(trace.probe_id), String(trace.af), trace.protocol]);
      expect(trace.measured_at).toMatch(ISO);
      expect(trace.created_at).toMatch(ISO);
    }
    // The same instant as GraphQL's DateTime writes it.
    const one: any = await run(subgraph, reader, `query($id: ID!) { trace(id: $id) { measuredAt createdAt } }`, { id: json[0].trace_id });
    expect(JSON.parse(JSON.stringify(one.data.trace))).toEqual({ measuredAt: json[0].measured_at, createdAt: json[0].created_at });
  });

  it.each([
    ['msm_id', (t: Row) => ({ msmId: t.msm_id })],
    ['probe_id', (t: Row) => ({ probeId: t.probe_id })],
    ['af', () => ({ af: 4 })],
    ['protocol', () => ({ protocol: 'ICMP' })],
    ['hop_asn', () => ({ hopAsn: 3356 })],
    ['target_asn', () => ({ targetAsn: 15169 })],
  ])('filters by %s as the search does', async (_name, filtersOf) => {
    const [sample] = ((await (await fetch(`${base}?include_hops=false&limit=1`)).json()) as { data: Row[] }).data;
    const filters = filtersOf(sample);
    const rest = Object.entries(filters).map(([k, v]) => `${k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}=${v}`).join('&');
    const exported = ((await (await fetch(`${base}?include_hops=false&limit=10000&hours=48&${rest}`)).json()) as { data: Row[] }).data;
    const expected = await searched({ ...filters, hours: 48 });
    expect(expected.length).toBeGreaterThan(0);
    expect(exported.map((t) => t.trace_id)).toEqual(expected);
  });

  it('continues past each page with its cursor, in JSON and in CSV, without gaps or repeats', async () => {
    const all = await searched({ hours: 48 });
    expect(all).toHaveLength(1500);
    const json: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body = (await (await fetch(`${base}?include_hops=false&hours=48&limit=400${cursor ? `&cursor=${cursor}` : ''}`)).json()) as { data: Row[]; hasMore: boolean; nextCursor: string | null };
      json.push(...body.data.map((t) => t.trace_id));
      expect(body.hasMore).toBe(body.nextCursor !== null);
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(4);
    expect(json).toEqual(all);
    const csv: string[] = [];
    cursor = null;
    do {
      const response: Response = await fetch(`${base}?format=csv&include_hops=false&hours=48&limit=700${cursor ? `&cursor=${cursor}` : ''}`);
      csv.push(...parseCsv(await response.text()).slice(1).map((row) => row[0]));
      cursor = response.headers.get('x-next-cursor');
    } while (cursor);
    expect(csv).toEqual(all);
    // A page that ends exactly at the last trace says there is no more.
    const exact = (await (await fetch(`${base}?include_hops=false&hours=48&limit=1500`)).json()) as { hasMore: boolean; nextCursor: string | null };
    expect(exact).toMatchObject({ hasMore: false, nextCursor: null });
    expect((await fetch(`${base}?format=csv&hours=48&limit=1500`)).headers.get('x-next-cursor')).toBeNull();
  });

  it('takes the search cursor and gives one the search takes', async () => {
    const first: any = await run(subgraph, reader, `query { traces(hours: 48, limit: 100) { nextCursor } }`);
    const exported = (await (await fetch(`${base}?include_hops=false&hours=48&limit=100&cursor=${first.data.traces.nextCursor}`)).json()) as { data: Row[]; nextCursor: string };
    const all = await searched({ hours: 48 });
    expect(exported.data.map((t) => t.trace_id)).toEqual(all.slice(100, 200));
    const next: any = await run(subgraph, reader, `query($c: String) { traces(hours: 48, limit: 100, cursor: $c) { data { traceId } } }`, { c: exported.nextCursor });
    expect(next.data.traces.data.map((t: Row) => t.traceId)).toEqual(all.slice(200, 300));
  });

  it.each([
    ['unknown_parameter', 'hop', 'hop=1.2.3.4'], ['unknown_parameter', 'api_key', 'api_key=x'], ['unknown_parameter', 'page', 'page=2'],
    ['invalid_parameter', 'limit', 'limit=1&limit=2'], ['invalid_parameter', 'cursor', 'cursor=garbage'], ['invalid_parameter', 'af', 'af=5'],
    ['invalid_parameter', 'protocol', 'protocol=icmp'], ['invalid_parameter', 'hop_ip', 'hop_ip=router'], ['invalid_parameter', 'msm_id', 'msm_id=-4'],
  ])('answers 400 %s naming %s', async (code, param, query) => {
    const response = await fetch(`${base}?${query}`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code, param });
  });

  it('continues past 10,000 traces', async () => {
    // Six more copies of the 1,500 traces, a second apart: 10,500 in the window.
    await subgraph.orm.em.getConnection().execute(`insert into "traceroute"."trace" select gen_random_uuid(), t.measured_at - make_interval(secs => k),
      t.measurement_key || ':copy' || k, t.source, t.msm_id, t.probe_id, t.direction, t.status, t.af, t.protocol, t.probe_ip, t.probe_city,
      t.probe_country, t.probe_asn, t.probe_as_name, t.probe_lat, t.probe_lon, t.target_domain, t.target_ip, t.target_city, t.target_country,
      t.target_asn, t.target_as_name, t.target_lat, t.target_lon, t.hop_count, t.responding_hops, t.loss, t.rtt_ms, t.as_path, t.anomaly_score,
      t.anomaly, t.hops, t.created_at, t.error, t.stop_reason, t.hop_ips, t.hop_asns
      from "traceroute"."trace" t cross join generate_series(1, 6) k`);
    const first = (await (await fetch(`${base}?include_hops=false&hours=49&limit=10000`)).json()) as { data: Row[]; hasMore: boolean; nextCursor: string };
    expect(first).toMatchObject({ hasMore: true });
    expect(first.data).toHaveLength(10_000);
    const rest = (await (await fetch(`${base}?include_hops=false&hours=49&limit=10000&cursor=${first.nextCursor}`)).json()) as { data: Row[]; hasMore: boolean };
    expect(rest).toMatchObject({ hasMore: false });
    expect(rest.data).toHaveLength(500);
    expect(new Set([...first.data, ...rest.data].map((t) => t.trace_id)).size).toBe(10_500);
  });
});
