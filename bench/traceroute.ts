/**
 * Traceroute store benchmark: ingest rate of generated traces, p50/p99 of typical searches
 * (through the subgraph's GraphQL) against the same SQL run directly, and a 10,000-trace CSV
 * export's time and peak memory against PostgreSQL's own COPY of the same rows.
 *
 *   npm run bench:traceroute                      1,000,000 traces, embedded PostgreSQL
 *   TRACES=100000 npm run bench:traceroute        a smaller run
 *   DATABASE_URL=postgres://... npm run bench:traceroute
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import express from 'express';
import { graphql } from 'graphql';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { loadConfig } from '../platform/config.js';
import { ensureDatabaseExists, openPlatformDatabase } from '../platform/database.js';
import { openIdentityStore } from '../identity/index.js';
import { LocalKeyStore } from '../identity/local-key-store.js';
import { signPrincipal } from '../core/principal.js';
import { sharedIpEnricher } from '../subgraphs/traceroute/enrichment/ip-enricher.js';
import { createTraceExportHandler, exportSql, parseExportQuery } from '../subgraphs/traceroute/export/trace-export.handler.js';
import { createTracerouteSubgraph } from '../subgraphs/traceroute/index.js';
import { SyntheticTraceGenerator } from '../subgraphs/traceroute/ingest/synthetic-generator.js';
import { TraceImporter } from '../subgraphs/traceroute/ingest/trace-importer.js';
import { numbered, traceFilter } from '../subgraphs/traceroute/trace/trace-filter.js';

const TRACES = Number(process.env.TRACES ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const SECRET = 'bench-internal-secret-bench-internal-secret';

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-traceroute-'));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT ?? '5497' });
const database = await openPlatformDatabase({ databaseUrl: config.databaseUrl, dataDir, embeddedPort: config.embeddedDatabasePort });
const url = await ensureDatabaseExists(database.superuserUrl ?? database.url.replace(/\/[^/]*$/, '/postgres'), `bench_traceroute_${Date.now()}`);
const identityOrm = await openIdentityStore(url);
const subgraph = await createTracerouteSubgraph({ databaseUrl: url, internalSecret: SECRET, keyStore: new LocalKeyStore(identityOrm) });
const direct = new pg.Client({ connectionString: url });
await direct.connect();

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))];
const ms = (n: number) => `${n.toFixed(2)} ms`;

try {
  // Ingest: generation, enrichment, scoring against baselines and storage, as the CLI does it.
  const generator = new SyntheticTraceGenerator(await sharedIpEnricher(), 2026);
  const importer = new TraceImporter(subgraph.orm.em.fork(), await sharedIpEnricher());
  const started = performance.now();
  let lastReport = started;
  const report = await importer.store(generator.generate(TRACES, { days: 30 }), undefined, (r) => {
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      process.stderr.write(`  ${r.stored} stored, ${Math.round(r.stored / ((lastReport - started) / 1000))}/s\n`);
    }
  });
  const ingestSeconds = (performance.now() - started) / 1000;
  await direct.query('analyze traceroute.trace');
  const size = await direct.query(`select pg_size_pretty(sum(pg_total_relation_size(inhrelid))) as size from pg_inherits where inhparent = 'traceroute.trace'::regclass`);
  console.log(`traces: ${report.stored.toLocaleString('en')} stored in ${ingestSeconds.toFixed(1)} s: ${Math.round(report.stored / ingestSeconds)} traces/s (table + indexes ${size.rows[0].size})`);

  // Searches: each through GraphQL (argument validation, SQL, mapping, serialisation) and as raw SQL.
  const sample = (await direct.query(`select target_ip, probe_asn from traceroute.trace where measured_at > now() - interval '2 days' limit 1`)).rows[0];
  const searches: [string, Record<string, unknown>][] = [
    ['default (last 168 h, 50 newest)', {}],
    ['direction + status', { direction: 'outside_to_pk', status: 'completed' }],
    ['probeCountry + probeAsn', { probeCountry: 'PK', probeAsn: sample.probe_asn }],
    ['targetDomain partial', { targetDomain: 'dawn' }],
    ['targetIp exact, 720 h', { targetIp: sample.target_ip, hours: 720 }],
    ['minAnomaly 0.5, 720 h', { minAnomaly: 0.5, hours: 720 }],
    ['page 20 of 50', { page: 20 }],
  ];
  const context = () => subgraph.createContext(signPrincipal({ accountId: '00000000-0000-4000-8000-000000000001', account: 'bench', keyId: 'k', kind: 'traceroute', mode: 'live' }, SECRET));
  const query = `query($a: TraceDirection, $s: TraceStatus, $pc: String, $asn: Int, $d: String, $ip: String, $m: Float, $h: Int, $p: Int) {
    traces(direction: $a, status: $s, probeCountry: $pc, probeAsn: $asn, targetDomain: $d, targetIp: $ip, minAnomaly: $m, hours: $h, page: $p) {
      data { traceId measuredAt direction status probeCity probeCountry probeAsn targetDomain targetIp targetCity anomalyScore }
      hasMore nextCursor } }`;
  console.log('\nsearch                               API p50 / p99          direct SQL p50 / p99     ratio p50 / p99');
  for (const [name, args] of searches) {
    const variables = { a: args.direction, s: args.status, pc: args.probeCountry, asn: args.probeAsn, d: args.targetDomain, ip: args.targetIp, m: args.minAnomaly, h: args.hours, p: args.page };
    const limit = 50;
    const filter = traceFilter(args, 168);
    const sql = `select t.id, t.measured_at, t.measurement_key, t.source, t.msm_id, t.probe_id, t.direction, t.status, t.af, t.protocol, t.probe_ip, t.probe_city, t.probe_country, t.probe_asn, t.probe_as_name, t.probe_lat, t.probe_lon, t.target_domain, t.target_ip, t.target_city, t.target_country, t.target_asn, t.target_as_name, t.target_lat, t.target_lon, t.hop_count, t.responding_hops, t.loss, t.rtt_ms, t.as_path, t.anomaly_score, t.anomaly, t.error, t.created_at
      from "traceroute"."trace" t where ${filter.where} order by t.measured_at desc, t.id desc limit ${limit + 1} offset ${((Number(args.page ?? 1)) - 1) * limit}`;
    const api: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let t = performance.now();
      const result = await graphql({ schema: subgraph.schema, source: query, variableValues: variables, contextValue: context() });
      if (result.errors) throw new Error(`${name}: ${result.errors[0].message}`);
      JSON.stringify(result);
      api.push(performance.now() - t);
      t = performance.now();
      await direct.query(numbered(sql), traceFilter(args, 168).params);
      raw.push(performance.now() - t);
    }
    const [a50, a99, r50, r99] = [percentile(api, 50), percentile(api, 99), percentile(raw, 50), percentile(raw, 99)];
    console.log(`${name.padEnd(36)} ${ms(a50).padStart(10)} / ${ms(a99).padEnd(10)} ${ms(r50).padStart(10)} / ${ms(r99).padEnd(10)}   ${(a50 / r50).toFixed(2)} / ${(a99 / r99).toFixed(2)}`);
  }

  // Export: 10,000 traces with hops as CSV through the HTTP handler, against COPY of the same rows.
  const handler = createTraceExportHandler({ basePath: '/v1/public', databaseUrl: url });
  const app = express();
  app.use((req, _res, next) => ((req as unknown as { id: string }).id = 'bench', next()));
  app.use(handler);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const exportUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/public/traces/export?format=csv&limit=10000&hours=720`;
  const measure = async (work: () => Promise<number>) => {
    globalThis.gc?.();
    const base = process.memoryUsage().rss;
    let peak = base;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const t = performance.now();
    const bytes = await work();
    const elapsed = performance.now() - t;
    clearInterval(timer);
    return { elapsed, bytes, peak: (Math.max(peak, process.memoryUsage().rss) - base) / 1024 / 1024 };
  };
  const drain = () => {
    let bytes = 0;
    return { sink: new Writable({ write: (chunk: Buffer, _e, done) => ((bytes += chunk.length), done()) }), bytes: () => bytes };
  };
  const viaApi = async () => {
    const response = await fetch(exportUrl);
    const counter = drain();
    await pipeline(response.body as unknown as NodeJS.ReadableStream, counter.sink);
    return counter.bytes();
  };
  const viaCopy = async () => {
    const counter = drain();
    await pipeline(direct.query(copyTo(exportSql(parseExportQuery(new URL(exportUrl).searchParams)))), counter.sink);
    return counter.bytes();
  };
  await viaApi();
  await viaCopy();
  const apiRuns = [await measure(viaApi), await measure(viaApi), await measure(viaApi)];
  const copyRuns = [await measure(viaCopy), await measure(viaCopy), await measure(viaCopy)];
  const best = <R extends { elapsed: number }>(runs: R[]) => runs.reduce((a, b) => (a.elapsed < b.elapsed ? a : b));
  const api = best(apiRuns);
  const copy = best(copyRuns);
  const peakApi = Math.max(...apiRuns.map((r) => r.peak));
  const peakCopy = Math.max(...copyRuns.map((r) => r.peak));
  console.log(`\nexport 10,000 traces as CSV with hops (${(api.bytes / 1024 / 1024).toFixed(1)} MiB):`);
  console.log(`  API (HTTP, streamed COPY): ${ms(api.elapsed)}, peak RSS growth ${peakApi.toFixed(1)} MiB`);
  console.log(`  COPY alone:                ${ms(copy.elapsed)}, peak RSS growth ${peakCopy.toFixed(1)} MiB`);
  console.log(`  ratio: time ${(api.elapsed / copy.elapsed).toFixed(2)}, peak memory growth ${peakCopy < 1 ? `n/a (COPY grew ${peakCopy.toFixed(1)} MiB; the API ${peakApi.toFixed(1)} MiB, HTTP client in the same process included)` : (peakApi / peakCopy).toFixed(2)}`);
  await new Promise((resolve) => server.close(resolve));
  await handler.close();
} finally {
  await direct.end();
  await subgraph.close();
  await identityOrm.close(true);
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
