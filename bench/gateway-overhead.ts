/**
 * bench/gateway-overhead: member lookups, each of another member of a pool of BENCH_MEMBERS
 * (10,000), side by side in one run on the same subgraphs, supergraph and query:
 *   - the membership subgraph directly (a signed principal header, as the edge sends);
 *   - our edge at /graphql with every rule on (key auth, rate limits counted, armor, idempotency
 *     step, request logging, principal signing), with the in-flight deduplication of identical
 *     subgraph fetches off (the comparison with the peers, which do not deduplicate by default),
 *   - and a second edge on the same subgraphs with it on (the default), /graphql and REST;
 *   - our REST bridge (GET /api/v1/members/{id}), the same lookup through the same edge, and the
 *     edge again with a GraphQL query selecting every field the REST answer carries (like for like);
 *   - a stock @apollo/gateway (ApolloServer + ApolloGateway, its default data source and fetcher,
 *     no edge features) adding a signed principal header, which the subgraphs require;
 *   - Hive Gateway (@graphql-hive/gateway's createGatewayRuntime) on the same supergraph, same header;
 *   - a bare proxy with no rules at all, the floor any gateway taking the hop to the subgraph sits on.
 * Each at 1, 10 and 100 connections (BENCH_CONNECTIONS=1,10,100), printing requests per second,
 * p50 and p99, and the ratios the issue sets targets for. Then a cheap REST page
 * (GET /members?limit=20) at concurrency 1 against the same rows read by one SQL query.
 * Everything runs in this process on the same two cores; autocannon runs in a worker thread.
 * Targets take turns in BENCH_ROUNDS rounds (5) of BENCH_SECONDS each (3), and each figure is the
 * median of its rounds; the page and its SQL take turns request by request. BENCH_TARGETS=direct,edge,stock
 * runs only the targets named so (by the start of their names); ratios without their targets print a dash.
 * Run on demand: `npm run bench:gateway-overhead`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { createGatewayRuntime } from '@graphql-hive/gateway';
import autocannon from 'autocannon';
import pg from 'pg';
import { Pool } from 'undici';
import { readSupergraph } from '../schema/supergraph.js';
import { PRINCIPAL_HEADER, signPrincipal } from '../core/principal.js';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEdgeService } from '../platform/edge-service.js';
import { COMPILED, measureAlternating, MEMBER_PAGE_SQL, ROOT, startBenchPlatform } from './bench-platform.js';
import { sampleLatencies, type Sampled } from './latency-sampler.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const levels = (process.env.BENCH_CONNECTIONS ?? '1,10,100').split(',').map(Number);
const pageSamples = Number(process.env.BENCH_PAGE_SAMPLES ?? 300);
const clockSamples = Number(process.env.BENCH_CLOCK_SAMPLES ?? 2000);
const warmSeconds = Number(process.env.BENCH_WARM_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
/** BENCH_TARGETS=direct,edge,stock: only the targets whose names start so (the ratios need their targets). */
const only = process.env.BENCH_TARGETS?.split(',');
const poolSize = Number(process.env.BENCH_MEMBERS ?? 10_000);
/** Where a request names its member; autocannon's setupRequest (member-pool.request.cjs) puts one of the pool there. */
const MEMBER = '__MEMBER_ID__';

// The main edge does not deduplicate (as the peers do not); a second one below does.
const bench = await startBenchPlatform('gateway-overhead', { subgraphQueryDeduplication: false });
const { platform, config, key } = bench;
const stops: (() => Promise<unknown>)[] = [];
const sql = new pg.Client({ connectionString: bench.databaseUrl });

/**
 * The principal header the peers send: signed again every minute, so a long run never sends a
 * stale one (subgraphs refuse signatures older than five minutes). Costs the peers nothing per request.
 */
let signed = { header: signPrincipal(key.principal, config.internalSecret), at: Date.now() };
const principalHeader = () => {
  if (Date.now() - signed.at > 60_000) signed = { header: signPrincipal(key.principal, config.internalSecret), at: Date.now() };
  return signed.header;
};

/** A stock Apollo gateway: ApolloServer + ApolloGateway, the default RemoteGraphQLDataSource with the header added. */
async function startStockApollo(): Promise<string> {
  const gateway = new ApolloGateway({
    supergraphSdl: readSupergraph(),
    buildService: ({ name }) =>
      new (class extends RemoteGraphQLDataSource {
        override willSendRequest({ request }: Parameters<NonNullable<RemoteGraphQLDataSource['willSendRequest']>>[0]) {
          request.http?.headers.set(PRINCIPAL_HEADER, principalHeader());
        }
      })({ url: platform.subgraphUrls[name as keyof typeof platform.subgraphUrls] }),
  });
  const server = new ApolloServer({ gateway });
  const { url } = await startStandaloneServer(server, { listen: { port: 0, host: '127.0.0.1' } });
  stops.push(() => server.stop());
  return url;
}

/** Hive Gateway on the same supergraph, the header added to every subgraph request; its logging off, as ours is silent. */
async function startHive(): Promise<string> {
  const urls = platform.subgraphUrls as Record<string, string>;
  // The committed supergraph names each subgraph's URL as the dev default; point them at this run's.
  const supergraph = readSupergraph().replace(/@join__graph\(name: "(\w+)", url: "[^"]*"\)/g, (all, name: string) =>
    urls[name] ? `@join__graph(name: "${name}", url: "${urls[name]}")` : all,
  );
  const gateway = createGatewayRuntime({
    supergraph,
    logging: false,
    graphiql: false,
    landingPage: false,
    propagateHeaders: { fromClientToSubgraphs: () => ({ [PRINCIPAL_HEADER]: principalHeader() }) },
  });
  const server = http.createServer(gateway);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stops.push(async () => {
    await gateway.dispose();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
}

/**
 * The floor: a proxy with no rules at all (no key, no limits, no logging, no parsing) that hands
 * the client's body to the membership subgraph with the signed header and streams the answer
 * back, over the same pooled undici client our edge uses. No gateway can cost less and still
 * take the hop, so it shows how much of a ratio is the hop's and how much is the edge's own.
 */
async function startBareProxy(): Promise<string> {
  const upstream = new URL(platform.subgraphUrls.membership);
  const pool = new Pool(upstream.origin, { connections: 128, pipelining: 1 });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      pool
        .request({ path: upstream.pathname, method: 'POST', headers: { 'content-type': 'application/json', [PRINCIPAL_HEADER]: principalHeader() }, body: Buffer.concat(chunks) })
        .then(async (answer) => {
          const body = Buffer.from(await answer.body.arrayBuffer());
          res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': body.length });
          res.end(body);
        })
        .catch(() => {
          res.statusCode = 502;
          res.end();
        });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stops.push(async () => {
    await pool.close();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
}

interface Row {
  name: string;
  connections: number;
  p50: number;
  p99: number;
  rps: number;
  failures: number;
  /** The lowest and highest requests per second of its rounds. */
  spread?: string;
}

const fmt = (n: number, digits = 0) => n.toFixed(digits);

try {
  const auth = { authorization: `Bearer ${key.secret}` };
  const created = await fetch(`${platform.baseUrl}/api/v1/members`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench Member', email: 'bench@example.org' }),
  });
  const member = (await created.json()) as { id: string };
  // The pool: every request looks up one of these at random, so no two requests in flight are
  // likely to be the same fetch. Created in the membership subgraph, two hundred to a request
  // (the edge's armor allows 15 aliases a document).
  const pool = [member.id];
  for (let from = 1; from < poolSize; from += 200) {
    const count = Math.min(200, poolSize - from);
    const fields = Array.from({ length: count }, (_, i) => `m${i}: createMember(name: "Pool Member ${from + i}", email: "pool${from + i}@example.org") { id }`);
    const answer = (await (await fetch(platform.subgraphUrls.membership, { method: 'POST', headers: { [PRINCIPAL_HEADER]: principalHeader(), 'content-type': 'application/json' }, body: JSON.stringify({ query: `mutation { ${fields.join(' ')} }` }) })).json()) as {
      data?: Record<string, { id: string }>;
      errors?: unknown[];
    };
    if (answer.errors || !answer.data) throw new Error(`creating the member pool failed: ${JSON.stringify(answer.errors)}`);
    pool.push(...Object.values(answer.data).map((m) => m.id));
  }
  const poolFile = path.join(os.tmpdir(), `bench-member-pool-${process.pid}.json`);
  await writeFile(poolFile, JSON.stringify(pool));
  stops.push(() => rm(poolFile, { force: true }));
  process.env.BENCH_MEMBER_POOL_FILE = poolFile;
  const setupRequest = path.join(ROOT, 'bench/member-pool.request.cjs');
  const lookup = JSON.stringify({
    query: 'query($id: ID!) { member(id: $id) { id name email status periodEnd } }',
    variables: { id: MEMBER },
  });
  const graphqlPost = (url: string, headers: Record<string, string>) => ({ url, method: 'POST' as const, headers: { 'content-type': 'application/json', ...headers }, body: lookup });
  // The same lookup selecting every field the REST representation carries (checked below), so
  // the REST bridge's own cost is compared like for like; the short lookup above is the issue's.
  const restFields = JSON.stringify({
    query: `query($id: ID!) { member(id: $id) { id name email phone addressLine1 addressLine2 city region postalCode country headline skills customFields
      categoryId joinedOn periodStart periodEnd graceEndsOn createdAt updatedAt location livemode status
      category { id name feeAmount currency period periodYears renewalBasis fixedMonth fixedDay graceDays createdAt livemode } } }`,
    variables: { id: MEMBER },
  });

  const [stockUrl, hiveUrl, bareUrl] = [await startStockApollo(), await startHive(), await startBareProxy()];
  // The same edge with deduplication on (the default), on the same subgraphs and key store.
  const deduplicating = await startEdgeService({ ...bench.config, subgraphQueryDeduplication: true, port: 0 }, bench.identityOrm, platform.subgraphUrls, bench.logger);
  stops.push(() => deduplicating.stop());
  const dedupBase = deduplicating.url.replace(/\/graphql$/, '');
  interface Target {
    name: string;
    url: string;
    method: 'GET' | 'POST';
    headers: Record<string, string>;
    body?: string;
    /** Signs the principal header again before each level (the direct call carries it itself). */
    resign?: boolean;
  }
  const targets: Target[] = [
    { name: 'direct (subgraph)', ...graphqlPost(platform.subgraphUrls.membership, { [PRINCIPAL_HEADER]: principalHeader() }), resign: true },
    { name: 'edge (/graphql)', ...graphqlPost(platform.graphqlUrl, auth) },
    { name: 'REST (/members/{id})', url: `${platform.baseUrl}/api/v1/members/${MEMBER}`, method: 'GET' as const, headers: auth },
    { name: 'edge, REST\'s fields', ...graphqlPost(platform.graphqlUrl, auth), body: restFields },
    { name: 'edge, dedup on', ...graphqlPost(deduplicating.url, auth) },
    { name: 'REST, dedup on', url: `${dedupBase}/api/v1/members/${MEMBER}`, method: 'GET' as const, headers: auth },
    { name: 'stock @apollo/gateway', ...graphqlPost(stockUrl, auth) },
    { name: 'Hive Gateway', ...graphqlPost(hiveUrl, auth) },
    { name: 'bare proxy (floor)', ...graphqlPost(bareUrl, {}) },
  ].filter((target) => !only || only.some((name) => target.name.startsWith(name)));
  {
    const rest = (await (await fetch(`${platform.baseUrl}/api/v1/members/${member.id}`, { headers: auth })).json()) as Record<string, unknown>;
    const graph = (await (await fetch(platform.graphqlUrl, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: restFields.replace(MEMBER, member.id) })).json()) as { data: { member: Record<string, unknown> } };
    if (JSON.stringify(Object.keys(rest).sort()) !== JSON.stringify(Object.keys(graph.data.member).sort())) {
      throw new Error(`the REST representation's fields changed: ${Object.keys(rest).join(', ')}; update restFields`);
    }
  }
  // Every peer answers the same data for the same query before anything is timed.
  for (const target of targets) {
    const response = await fetch(target.url.replace(MEMBER, member.id), { method: target.method, headers: target.headers, body: target.body?.replace(MEMBER, member.id) });
    const text = await response.text();
    if (response.status !== 200 || !text.includes(member.id) || text.includes('"errors"')) throw new Error(`${target.name} answered ${response.status}: ${text}`);
  }

  // Every target warmed once before anything is measured: the first target to run at 1
  // connection was otherwise also the first to exercise its code (JIT, pools, caches), and its
  // figure swung by half between runs with the order of the targets.
  for (const target of targets) {
    const { resign, name: _name, ...request } = target;
    if (resign) request.headers = { ...request.headers, [PRINCIPAL_HEADER]: principalHeader() };
    await autocannon({ ...request, requests: [{ setupRequest }], connections: 10, duration: warmSeconds, workers: 1 } as autocannon.Options);
  }

  const rows: Row[] = [];
  for (const connections of levels) {
    // The targets take turns, round after round, and each figure is the median of its rounds:
    // a shared machine changes speed from one minute to the next, and run one after another a
    // target measured in a slow minute looked worse than its peer by as much as the ratios at stake.
    const samples = new Map<string, Row[]>();
    for (let round = 0; round < rounds; round++) {
      for (const target of targets) {
        const { resign, name: _name, ...request } = target;
        if (resign) request.headers = { ...request.headers, [PRINCIPAL_HEADER]: principalHeader() };
        // A short warm-up so JIT and connection pools are in their steady state. The load runs in
        // a worker thread so it does not compete with the servers' event loop.
        await autocannon({ ...request, requests: [{ setupRequest }], connections, duration: 1, workers: 1 } as autocannon.Options);
        const result = await autocannon({ ...request, requests: [{ setupRequest }], connections, duration: seconds, workers: 1 } as autocannon.Options);
        const row = { name: target.name, connections, p50: result.latency.p50, p99: result.latency.p99, rps: result.requests.average, failures: result.non2xx + result.errors };
        samples.set(target.name, [...(samples.get(target.name) ?? []), row]);
      }
    }
    for (const target of targets) {
      const runs = samples.get(target.name)!;
      const median = (pick: (r: Row) => number) => runs.map(pick).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
      const rpsSorted = runs.map((r) => r.rps).sort((a, b) => a - b);
      rows.push({
        name: target.name,
        connections,
        p50: median((r) => r.p50),
        p99: median((r) => r.p99),
        rps: median((r) => r.rps),
        failures: runs.reduce((sum, r) => sum + r.failures, 0),
        spread: `${fmt(rpsSorted[0])}–${fmt(rpsSorted[rpsSorted.length - 1])}`,
      });
    }
  }

  // One connection again, timed in microseconds (autocannon's whole milliseconds cannot tell a
  // p50 of 0.6 ms from one of 1.4 ms), the targets taking turns request by request.
  const clock: Sampled[] = clockSamples > 0
    ? await sampleLatencies(
        targets.map(({ resign, ...target }) => (resign ? { ...target, headers: { ...target.headers, [PRINCIPAL_HEADER]: principalHeader() } } : target)),
        clockSamples,
        { placeholder: MEMBER, pool },
      )
    : [];

  await sql.connect();
  // REST and SQL take turns, one request each, so both see the same machine.
  const [page, pageSql] = await measureAlternating(pageSamples, [
    async () => {
      const response = await fetch(`${platform.baseUrl}/api/v1/members?limit=20`, { headers: auth });
      if (response.status !== 200) throw new Error(`GET /members: ${response.status}`);
      await response.arrayBuffer();
    },
    async () => {
      await sql.query(MEMBER_PAGE_SQL, [key.principal.accountId]);
    },
  ]);

  console.log(`\ngateway-overhead: member lookups over a pool of ${pool.length} members (deduplication off unless named), ${rounds} rounds of ${seconds} s per target and level (medians; targets take turns), ${COMPILED ? 'compiled JavaScript' : 'under tsx'}, node ${process.version}, ${(await import('node:os')).cpus().length} cores\n`);
  console.log('target                    conns   p50 ms   p99 ms    req/s   failures   req/s of the rounds');
  for (const r of rows) {
    console.log(`${r.name.padEnd(24)}${String(r.connections).padStart(7)}${String(r.p50).padStart(9)}${String(r.p99).padStart(9)}${fmt(r.rps).padStart(9)}${String(r.failures).padStart(11)}   ${r.spread ?? ''}`);
  }
  const failed = rows.filter((r) => r.failures > 0);
  if (failed.length) throw new Error(`requests failed for ${failed.map((r) => `${r.name} at ${r.connections}`).join(', ')}: the figures would not compare like with like`);

  console.log('\nratios                                   ' + levels.map((c) => `${c} conns`.padStart(10)).join(''));
  // A ratio whose targets BENCH_TARGETS left out prints as a dash.
  const safe = (g: () => number) => {
    try {
      return g();
    } catch {
      return undefined;
    }
  };
  const at = (name: string, c: number) => rows.find((r) => r.name === name && r.connections === c)!;
  const ratio = (label: string, f: (c: number) => number, target: string) =>
    console.log(`${label.padEnd(41)}${levels.map((c) => (safe(() => f(c)) === undefined ? '—' : `×${f(c).toFixed(2)}`).padStart(10)).join('')}   (target ${target})`);
  ratio('edge / stock Apollo, req/s', (c) => at('edge (/graphql)', c).rps / at('stock @apollo/gateway', c).rps, '≥ 1.5');
  ratio('edge / Hive Gateway, req/s', (c) => at('edge (/graphql)', c).rps / at('Hive Gateway', c).rps, '≥ 1.0');
  ratio('edge p50 / direct p50', (c) => at('edge (/graphql)', c).p50 / Math.max(at('direct (subgraph)', c).p50, 1), '≤ 1.5');
  ratio('REST p50 / edge GraphQL p50', (c) => at('REST (/members/{id})', c).p50 / Math.max(at('edge (/graphql)', c).p50, 1), '≤ 1.1');
  ratio('  the same, GraphQL with REST\'s fields', (c) => at('REST (/members/{id})', c).p50 / Math.max(at('edge, REST\'s fields', c).p50, 1), '≤ 1.1');
  ratio('REST / edge GraphQL, mean latency', (c) => at('edge (/graphql)', c).rps / at('REST (/members/{id})', c).rps, '≤ 1.1, as p50');
  ratio('  the same, GraphQL with REST\'s fields', (c) => at('edge, REST\'s fields', c).rps / at('REST (/members/{id})', c).rps, '≤ 1.1, as p50');
  ratio('bare proxy / stock Apollo, req/s', (c) => at('bare proxy (floor)', c).rps / at('stock @apollo/gateway', c).rps, 'none: what the hop allows');
  ratio('edge / bare proxy, req/s', (c) => at('edge (/graphql)', c).rps / at('bare proxy (floor)', c).rps, 'none');
  ratio('edge / direct, req/s', (c) => at('edge (/graphql)', c).rps / at('direct (subgraph)', c).rps, '≥ 0.7');
  ratio('edge dedup on / off, req/s', (c) => at('edge, dedup on', c).rps / at('edge (/graphql)', c).rps, 'none: what deduplication adds');
  ratio('REST dedup on / off, req/s', (c) => at('REST, dedup on', c).rps / at('REST (/members/{id})', c).rps, 'none'); 
  // The p50 target in finer units than autocannon's whole milliseconds: by Little's law the mean
  // latency is connections ÷ req/s, so this is direct req/s ÷ edge req/s.
  ratio('edge / direct, mean latency', (c) => at('direct (subgraph)', c).rps / at('edge (/graphql)', c).rps, '≤ 1.5, as p50');
  console.log('(autocannon reports whole milliseconds; a p50 under 1 ms counts as 1 in a ratio)');

  if (clock.length) {
    console.log(`\none connection by the clock: ${clockSamples} requests per target, one at a time, taking turns request by request (µs)\n`);
    console.log('target                      p50 µs   p99 µs  mean µs');
    for (const r of clock) console.log(`${r.name.padEnd(24)}${fmt(r.p50).padStart(10)}${fmt(r.p99).padStart(9)}${fmt(r.mean).padStart(9)}`);
    const p50 = (name: string) => clock.find((r) => r.name === name)?.p50;
    const mean = (name: string) => clock.find((r) => r.name === name)?.mean;
    const line = (label: string, a: number | undefined, b: number | undefined, target: string) =>
      console.log(`${label.padEnd(41)}${(a === undefined || b === undefined ? '—' : `×${(a / b).toFixed(2)}`).padStart(10)}   (target ${target})`);
    line('edge p50 / direct p50', p50('edge (/graphql)'), p50('direct (subgraph)'), '≤ 1.5');
    line('REST p50 / edge GraphQL p50', p50('REST (/members/{id})'), p50('edge (/graphql)'), '≤ 1.1');
    line('  the same, GraphQL with REST\'s fields', p50('REST (/members/{id})'), p50('edge, REST\'s fields'), '≤ 1.1');
    line('stock Apollo / edge, mean latency', mean('stock @apollo/gateway'), mean('edge (/graphql)'), '≥ 1.5, as req/s at 1 connection');
    line('Hive Gateway / edge, mean latency', mean('Hive Gateway'), mean('edge (/graphql)'), '≥ 1.0, as req/s at 1 connection');
    line('stock Apollo / bare proxy, mean latency', mean('stock @apollo/gateway'), mean('bare proxy (floor)'), 'none: what the hop allows');
  }

  console.log(`\nGET /api/v1/members?limit=20, one at a time, ${pageSamples} samples: REST p50 ${page.p50.toFixed(2)} ms, p99 ${page.p99.toFixed(2)} ms;`);
  console.log(`the same page in SQL: p50 ${pageSql.p50.toFixed(2)} ms, p99 ${pageSql.p99.toFixed(2)} ms; REST / SQL p50 ×${(page.p50 / pageSql.p50).toFixed(2)} (target ≤ 5)\n`);
} finally {
  await sql.end().catch(() => {});
  for (const stop of stops.reverse()) await stop().catch(() => {});
  await bench.stop();
}
