/**
 * Traceroute store benchmark at the scale researchers search: TRACES traces (default 10^7), the
 * first SEED_TRACES of them generated and ingested as the CLI does (its rate is printed), the rest
 * copies of those made in PostgreSQL (generate_series, indexes dropped during the load and built
 * after), each with its own measurement, probe, id and time. Then p50/p99 of the searches Atlas
 * users make (by probe, by measurement, by an AS on the path, and the others), through the
 * subgraph's GraphQL execution (argument validation, SQL, mapping, serialisation; the document
 * parsed and validated once, as Apollo's document store keeps it) against the same SQL run
 * directly, with the 2x target for the p50, and a
 * 10,000-trace CSV export's time and peak memory against PostgreSQL's own COPY of the same rows.
 *
 *   npm run bench:traceroute                        10,000,000 traces (several minutes, ~20 GB), embedded PostgreSQL
 *   TRACES=1000000 npm run bench:traceroute         a smaller run
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
import { execute, parse, validate } from 'graphql';
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
import { SUMMARY_COLUMNS } from '../subgraphs/traceroute/trace/trace.service.js';

const TRACES = Number(process.env.TRACES ?? 10_000_000);
const SEED = Math.min(TRACES, Number(process.env.SEED_TRACES ?? 20_000));
const RUNS = Number(process.env.BENCH_RUNS ?? 60);
const SECRET = 'bench-internal-secret-bench-internal-secret';
/** Copies get measurements and probes of their own: about this many distinct ones in all. */
const MEASUREMENTS = 8_000;
const PROBES = 7_000;

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
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

/**
 * The rest of the traces, as copies of the generated ones made in PostgreSQL: copy k of a trace is
 * measured k × 0.37 s earlier, in measurement `msm_id + (k mod 1000) × 100` and probe
 * `probe_id + (k mod 100) × 1000`, under a UUIDv7 id of its own time. The secondary indexes are
 * dropped for the load and built after it, which is several times faster than keeping them.
 */
async function copyTraces(total: number): Promise<void> {
  const remaining = total - SEED;
  if (remaining <= 0) return;
  const started = performance.now();
  await direct.query(`create temporary table seed as select row_number() over (order by id) as n, t.* from traceroute.trace t`);
  const indexes = (
    await direct.query<{ indexname: string; indexdef: string }>(
      `select i.indexname, i.indexdef from pg_indexes i where i.schemaname = 'traceroute' and i.tablename = 'trace'
       and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
    )
  ).rows;
  for (const index of indexes) await direct.query(`drop index traceroute."${index.indexname}"`);
  const copies = Math.ceil(remaining / SEED);
  const perStatement = Math.max(1, Math.floor(500_000 / SEED));
  for (let first = 1; first <= copies; first += perStatement) {
    const last = Math.min(copies, first + perStatement - 1);
    await direct.query(
      `insert into traceroute.trace (id, measured_at, measurement_key, source, msm_id, probe_id, direction, status, af, protocol, probe_ip,
        probe_city, probe_country, probe_asn, probe_as_name, probe_lat, probe_lon, target_domain, target_ip, target_city, target_country,
        target_asn, target_as_name, target_lat, target_lon, hop_count, responding_hops, loss, rtt_ms, as_path, anomaly_score, anomaly, hops,
        created_at, error, stop_reason, hop_ips, hop_asns, provenance)
       select (lpad(to_hex((extract(epoch from c.at) * 1000)::bigint), 12, '0') || '7' || substr(md5(random()::text), 1, 3)
          || to_hex(8 + floor(random() * 4)::int) || substr(md5(random()::text), 1, 15))::uuid,
        c.at, s.measurement_key || ':' || k, s.source, s.msm_id + (k % 1000) * 100, s.probe_id + (k % 100) * 1000, s.direction, s.status,
        s.af, s.protocol, s.probe_ip, s.probe_city, s.probe_country, s.probe_asn, s.probe_as_name, s.probe_lat, s.probe_lon, s.target_domain,
        s.target_ip, s.target_city, s.target_country, s.target_asn, s.target_as_name, s.target_lat, s.target_lon, s.hop_count,
        s.responding_hops, s.loss, s.rtt_ms, s.as_path, s.anomaly_score, s.anomaly, s.hops, now(), s.error, s.stop_reason, s.hop_ips,
        s.hop_asns, s.provenance
       from generate_series($1::int, $2::int) k cross join seed s
       cross join lateral (select s.measured_at - make_interval(secs => k * 0.37) as at) c
       where (k - 1) * ${SEED} + s.n <= ${remaining}`,
      [first, last],
    );
    process.stderr.write(`  ${Math.min(remaining, last * SEED).toLocaleString('en')} of ${remaining.toLocaleString('en')} copied (${seconds(started)})\n`);
  }
  const building = performance.now();
  await direct.query(`set maintenance_work_mem = '1GB'`);
  for (const index of indexes) await direct.query(index.indexdef.replace(' ON ONLY ', ' ON '));
  console.log(`copies: ${remaining.toLocaleString('en')} made in SQL in ${seconds(started)} (indexes rebuilt in ${seconds(building)})`);
}

try {
  // Ingest: generation, enrichment, scoring against baselines and storage, as the CLI does it.
  const generator = new SyntheticTraceGenerator(await sharedIpEnricher(), 2026);
  const importer = new TraceImporter(subgraph.orm.em.fork(), await sharedIpEnricher());
  const started = performance.now();
  let lastReport = started;
  const report = await importer.store(generator.generate(SEED, { days: 30 }), undefined, (r) => {
    if (performance.now() - lastReport > 10_000) {
      lastReport = performance.now();
      process.stderr.write(`  ${r.stored} stored, ${Math.round(r.stored / ((lastReport - started) / 1000))}/s\n`);
    }
  });
  const ingestSeconds = (performance.now() - started) / 1000;
  console.log(`ingest: ${report.stored.toLocaleString('en')} generated traces stored in ${ingestSeconds.toFixed(1)} s: ${Math.round(report.stored / ingestSeconds)} traces/s`);
  await copyTraces(TRACES);
  await direct.query('vacuum analyze traceroute.trace');
  const size = await direct.query(`select count(*)::bigint as n, pg_size_pretty(sum(pg_total_relation_size(inhrelid))) as size from pg_inherits where inhparent = 'traceroute.trace'::regclass`);
  const count = await direct.query(`select count(*)::bigint as n from traceroute.trace`);
  console.log(`traces: ${Number(count.rows[0].n).toLocaleString('en')} (table + indexes ${size.rows[0].size})`);

  // Searches: each through GraphQL (argument validation, SQL, mapping, serialisation) and as raw SQL.
  const sample = (await direct.query(`select target_ip, probe_asn, probe_id, msm_id from traceroute.trace where measured_at > now() - interval '2 days' limit 1`)).rows[0];
  // An AS most paths cross, and one few do.
  const asns = (await direct.query(`select asn, count(*)::int as n from (select unnest(hop_asns) as asn from (select hop_asns from traceroute.trace limit 20000) t) a group by 1 order by 2 desc`)).rows;
  const common = asns[0]?.asn ?? 3356;
  const rare = asns.at(-1)?.asn ?? 13335;
  const month = { since: new Date(Date.now() - 31 * 86_400_000).toISOString(), until: new Date().toISOString() };
  const searches: [string, Record<string, unknown>][] = [
    ['probeId (last 168 h)', { probeId: sample.probe_id }],
    ['probeId, 31 days', { probeId: sample.probe_id, ...month }],
    ['msmId (last 168 h)', { msmId: sample.msm_id }],
    ['msmId, 31 days', { msmId: sample.msm_id, ...month }],
    [`hopAsn ${common} (most paths)`, { hopAsn: common }],
    [`hopAsn ${rare} (fewest paths)`, { hopAsn: rare }],
    [`hopAsn ${rare}, 31 days`, { hopAsn: rare, ...month }],
    ['default (last 168 h, 50 newest)', {}],
    ['direction + status', { direction: 'outside_to_pk', status: 'completed' }],
    ['probeCountry + probeAsn', { probeCountry: 'PK', probeAsn: sample.probe_asn }],
    ['targetDomain partial', { targetDomain: 'dawn' }],
    ['targetIp exact, 720 h', { targetIp: sample.target_ip, hours: 720 }],
    ['minAnomaly 0.5, 720 h', { minAnomaly: 0.5, hours: 720 }],
    ['page 20 of 50', { page: 20 }],
  ];
  const context = () => subgraph.createContext(signPrincipal({ accountId: '00000000-0000-4000-8000-000000000001', account: 'bench', keyId: 'k', kind: 'traceroute', mode: 'live' }, SECRET));
  const query = `query($a: TraceDirection, $s: TraceStatus, $pc: String, $asn: Int, $d: String, $ip: String, $m: Float, $h: Int, $p: Int,
    $probe: Int, $msm: Int, $hopAsn: Int, $since: DateTime, $until: DateTime) {
    traces(direction: $a, status: $s, probeCountry: $pc, probeAsn: $asn, targetDomain: $d, targetIp: $ip, minAnomaly: $m, hours: $h, page: $p,
      probeId: $probe, msmId: $msm, hopAsn: $hopAsn, since: $since, until: $until) {
      data { traceId measuredAt direction status probeCity probeCountry probeAsn targetDomain targetIp targetCity anomalyScore }
      hasMore nextCursor } }`;
  // Parsed and validated once, as the subgraph's Apollo Server keeps a repeated query in its document store.
  const document = parse(query);
  const invalid = validate(subgraph.schema, document);
  if (invalid.length) throw invalid[0];
  console.log('\nsearch                               API p50 / p99          direct SQL p50 / p99     ratio p50 / p99   p50 within 2x');
  const verdicts: boolean[] = [];
  for (const [name, args] of searches) {
    const variables = {
      a: args.direction, s: args.status, pc: args.probeCountry, asn: args.probeAsn, d: args.targetDomain, ip: args.targetIp, m: args.minAnomaly,
      h: args.hours, p: args.page, probe: args.probeId, msm: args.msmId, hopAsn: args.hopAsn, since: args.since, until: args.until,
    };
    const limit = 50;
    const filterArgs = { ...args, since: args.since ? new Date(String(args.since)) : undefined, until: args.until ? new Date(String(args.until)) : undefined };
    // The statement the search runs (TraceService.list), its window worked out as the API does it.
    const sql = () => {
      const filter = traceFilter(filterArgs as Parameters<typeof traceFilter>[0], 168);
      return [
        numbered(`select ${SUMMARY_COLUMNS} from "traceroute"."trace" t where ${filter.where} order by t.measured_at desc, t.id desc limit ? offset ?`),
        [...filter.params, limit + 1, ((Number(args.page ?? 1)) - 1) * limit],
      ] as const;
    };
    const api: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < RUNS + 5; i++) {
      let t = performance.now();
      const result = await execute({ schema: subgraph.schema, document, variableValues: variables, contextValue: context() });
      if (result.errors) throw new Error(`${name}: ${result.errors[0].message}`);
      JSON.stringify(result);
      const apiTime = performance.now() - t;
      t = performance.now();
      const [text, params] = sql();
      await direct.query(text, [...params]);
      const rawTime = performance.now() - t;
      // The first runs warm the caches of both.
      if (i >= 5) (api.push(apiTime), raw.push(rawTime));
    }
    const [a50, a99, r50, r99] = [percentile(api, 50), percentile(api, 99), percentile(raw, 50), percentile(raw, 99)];
    verdicts.push(a50 <= 2 * r50);
    console.log(`${name.padEnd(36)} ${ms(a50).padStart(10)} / ${ms(a99).padEnd(10)} ${ms(r50).padStart(10)} / ${ms(r99).padEnd(10)}   ${(a50 / r50).toFixed(2)} / ${(a99 / r99).toFixed(2)}        ${a50 <= 2 * r50 ? 'yes' : 'NO'}`);
  }
  console.log(`${verdicts.filter(Boolean).length} of ${verdicts.length} searches have their API p50 within 2x of the SQL's`);

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
