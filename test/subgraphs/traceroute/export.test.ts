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
import { TEST_SECRET } from '../../support/subgraph-harness.js';

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
