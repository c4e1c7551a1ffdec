/**
 * bench/gateway-overhead: one member lookup measured directly at the membership subgraph,
 * through the gateway (/graphql), and through the REST bridge (/api/v1/members/{id}).
 * Run on demand: `npm run bench:gateway-overhead` (BENCH_SECONDS, BENCH_CONNECTIONS to tune).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { loadConfig } from '../platform/config.js';
import { openPlatformDatabase } from '../platform/database.js';
import { openIdentityStore } from '../platform/identity/index.js';
import { IdentityService } from '../platform/identity/identity.service.js';
import { createLogger } from '../platform/logger.js';
import { startPlatform } from '../platform/platform.js';
import { PRINCIPAL_HEADER, signPrincipal } from '../subgraphs/shared/principal.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-gateway-'));
const config = {
  ...loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT ?? '5499' }),
  port: 0,
  host: '127.0.0.1',
  subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
  // The limiter stays on (it is part of the edge's cost) but never refuses the bench's key.
  rateLimits: { livePerMinute: 1e12, testPerMinute: 1e12, inferencePerMinute: 1e12, anonymousPerMinute: 1e12 },
};
const database = await openPlatformDatabase({
  databaseUrl: config.databaseUrl,
  dataDir,
  embeddedPort: config.embeddedDatabasePort,
});
const platform = await startPlatform(config, database.url, createLogger('silent'));
const identityOrm = await openIdentityStore(database.url);

try {
  const identity = new IdentityService(identityOrm.em.fork());
  const { secret } = await identity.createKey({ account: 'bench', kind: 'live' });
  const auth = await identity.authenticate(secret);
  if (!auth.ok) throw new Error('the bench key does not authenticate');

  const created = await fetch(`${platform.baseUrl}/api/v1/members`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench Member', email: 'bench@example.org' }),
  });
  const member = (await created.json()) as { id: string };
  const lookup = JSON.stringify({
    query: 'query($id: ID!) { member(id: $id) { id name email status periodEnd } }',
    variables: { id: member.id },
  });

  const targets = [
    {
      name: 'direct (subgraph)',
      url: platform.subgraphUrls.membership,
      method: 'POST' as const,
      // Signed once: valid for five minutes, longer than a run.
      headers: { 'content-type': 'application/json', [PRINCIPAL_HEADER]: signPrincipal(auth.principal, config.internalSecret) },
      body: lookup,
    },
    {
      name: 'gateway (/graphql)',
      url: platform.graphqlUrl,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: lookup,
    },
    {
      name: 'REST (/api/v1/members/{id})',
      url: `${platform.baseUrl}/api/v1/members/${member.id}`,
      method: 'GET' as const,
      headers: { authorization: `Bearer ${secret}` },
    },
  ];

  const results: { name: string; p50: number; p99: number; rps: number; non2xx: number }[] = [];
  for (const target of targets) {
    // A short warm-up so JIT and connection pools are in their steady state.
    // The load runs in a worker thread so it does not compete with the servers' event loop.
    await autocannon({ ...target, connections, duration: 2, workers: 1 });
    const result = await autocannon({ ...target, connections, duration: seconds, workers: 1 });
    results.push({
      name: target.name,
      p50: result.latency.p50,
      p99: result.latency.p99,
      rps: result.requests.average,
      non2xx: result.non2xx + result.errors,
    });
  }

  console.log(`\ngateway-overhead: ${connections} connections, ${seconds} s per target, node ${process.version}\n`);
  console.log('target                        p50 ms   p99 ms    req/s   failures');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(28)}${String(r.p50).padStart(8)}${String(r.p99).padStart(9)}${r.rps.toFixed(0).padStart(9)}${String(r.non2xx).padStart(11)}`,
    );
  }
  const failed = results.filter((r) => r.non2xx > 0);
  if (failed.length) throw new Error(`requests failed for ${failed.map((r) => r.name).join(', ')}: the figures would not compare like with like`);
  const [direct, gateway, rest] = results;
  console.log(`\ngateway/direct: p50 ×${(gateway.p50 / direct.p50).toFixed(2)}, p99 ×${(gateway.p99 / direct.p99).toFixed(2)}, req/s ×${(gateway.rps / direct.rps).toFixed(2)}`);
  console.log(`REST/gateway:   p50 ×${(rest.p50 / gateway.p50).toFixed(2)}, p99 ×${(rest.p99 / gateway.p99).toFixed(2)}, req/s ×${(rest.rps / gateway.rps).toFixed(2)}\n`);
} finally {
  await identityOrm.close();
  await platform.stop();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
