/**
 * bench/rate-limit: the latency the rate limiter adds to one request (GET /api/v1/members/{id}
 * with a live key), counted in process and in Redis, against the same request with no counting.
 * Run on demand: `npm run bench:rate-limit` (BENCH_SECONDS, BENCH_ROUNDS, BENCH_CONNECTIONS; REDIS_URL
 * to use your Redis instead of a redis-server started here).
 *
 * The baseline is an edge with `limitsOff`: authentication still runs, no counter is touched and
 * no X-RateLimit-* header is set.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { RateLimiter } from '../edge/access/rate-limiter.js';
import { loadConfig } from '../platform/config.js';
import { openPlatformDatabase } from '../platform/database.js';
import { openIdentityStore } from '../identity/index.js';
import { IdentityService } from '../identity/identity.service.js';
import { createLogger } from '../core/logger.js';
import { startEdgeService, startPlatform } from '../platform/platform.js';
import { freePort } from '../test/support/free-port.js';
import { startRedisServer, type RunningRedis } from '../test/support/redis-server.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
// Limits so high that no run trips them: every request is counted and admitted.
const NEVER = Number.MAX_SAFE_INTEGER;

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-rate-limit-'));
// A free port unless one is asked for, so the bench runs beside a platform that is up.
const embeddedPort = process.env.EMBEDDED_PG_PORT ?? String(await freePort());
const base = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: embeddedPort });
const config = {
  ...base,
  port: 0,
  host: '127.0.0.1',
  subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
  rateLimits: { livePerMinute: NEVER, testPerMinute: NEVER, inferencePerMinute: NEVER, anonymousPerMinute: NEVER },
  redisUrl: undefined,
};
const logger = createLogger('silent');
// Whatever has started, stopped in reverse order at the end, also when a start fails.
const stops: (() => Promise<unknown>)[] = [() => rm(dataDir, { recursive: true, force: true })];
const started = <T extends { stop(): Promise<unknown> }>(service: T) => (stops.push(() => service.stop()), service);

try {
  const database = started(await openPlatformDatabase({ databaseUrl: config.databaseUrl, dataDir, embeddedPort: config.embeddedDatabasePort }));
  const redis: RunningRedis = started(process.env.REDIS_URL ? { url: process.env.REDIS_URL, stop: async () => {} } : await startRedisServer());
  // The platform's own edge counts in process; a second edge over the same subgraphs counts in Redis.
  const platform = started(await startPlatform(config, database.url, logger));
  const identityOrm = await openIdentityStore(database.url);
  stops.push(() => identityOrm.close());
  const redisEdge = started(await startEdgeService({ ...config, redisUrl: redis.url }, identityOrm, platform.subgraphUrls, logger));
  // The same edge with the guard counting nothing: authentication stays, the limiter goes.
  const offEdge = started(await startEdgeService(config, identityOrm, platform.subgraphUrls, logger, { limitsOff: true }));

  const { secret } = await new IdentityService(identityOrm.em.fork()).createKey({ account: 'bench', kind: 'live' });
  const headers = { authorization: `Bearer ${secret}` };
  const created = await fetch(`${platform.baseUrl}/api/v1/members`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench Member', email: `bench-${Date.now()}@example.org` }),
  });
  if (created.status !== 201) throw new Error(`creating the bench member answered ${created.status}: ${await created.text()}`);
  const member = (await created.json()) as { id: string };
  const memberPath = `/api/v1/members/${member.id}`;

  const variants = [
    { name: 'limits off', base: offEdge.url.replace(/\/graphql$/, ''), counted: false },
    { name: 'in-process counters', base: platform.baseUrl, counted: true },
    { name: 'Redis counters', base: redisEdge.url.replace(/\/graphql$/, ''), counted: true },
  ];

  // The load runs in a worker thread so it does not compete with the servers' event loop.
  const load = (variant: (typeof variants)[number], duration: number) =>
    autocannon({ url: variant.base + memberPath, headers, connections, duration, workers: 1 });

  for (const variant of variants) {
    // Each variant must be what its name says before it is measured.
    const probe = await fetch(variant.base + memberPath, { headers });
    await probe.arrayBuffer();
    if (probe.status !== 200 || probe.headers.has('x-ratelimit-limit') !== variant.counted) {
      throw new Error(`${variant.name}: answered ${probe.status}, X-RateLimit-Limit ${probe.headers.get('x-ratelimit-limit')}`);
    }
    // A warm-up, so JIT and connection pools are in their steady state.
    await load(variant, 3);
  }

  // Rounds, each variant once per round in a rotating order, so drift in the machine's load
  // spreads over all variants; each figure is the median over the rounds.
  const runs = new Map(variants.map((variant) => [variant.name, [] as autocannon.Result[]]));
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(round + i) % variants.length];
      runs.get(variant.name)!.push(await load(variant, seconds));
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const results = variants.map(({ name }) => {
    const of = runs.get(name)!;
    return {
      name,
      p50: median(of.map((r) => r.latency.p50)),
      p99: median(of.map((r) => r.latency.p99)),
      rps: median(of.map((r) => r.requests.average)),
      failures: of.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    };
  });

  // The limiter alone, called in a loop: what it adds without the HTTP and graph work around it.
  const redisClient = new Redis(redis.url);
  const alone = [
    { name: 'in-process counters', limiter: new RateLimiter() },
    { name: 'Redis counters', limiter: new RateLimiter(redisClient) },
  ];
  const window = [{ name: 'minute', seconds: 60, limit: NEVER, subject: 'key:bench' }];
  const hitTimes: { name: string; p50: number; p99: number }[] = [];
  for (const { name, limiter } of alone) {
    const micros: number[] = [];
    for (let i = 0; i < 12_000; i++) {
      const began = process.hrtime.bigint();
      await limiter.hit(window);
      if (i >= 2_000) micros.push(Number(process.hrtime.bigint() - began) / 1000);
    }
    micros.sort((a, b) => a - b);
    hitTimes.push({ name, p50: micros[Math.floor(micros.length * 0.5)], p99: micros[Math.floor(micros.length * 0.99)] });
  }
  await redisClient.quit();

  console.log(`\nrate-limit: GET /api/v1/members/{id}, live key, ${connections} connections, median of ${rounds} rounds of ${seconds} s per variant, node ${process.version}\n`);
  console.log('variant                       p50 ms   p99 ms    req/s   failures');
  for (const r of results) {
    console.log(
      `${r.name.padEnd(28)}${String(r.p50).padStart(8)}${String(r.p99).padStart(9)}${r.rps.toFixed(0).padStart(9)}${String(r.failures).padStart(11)}`,
    );
  }
  const [off, ...counted] = results;
  console.log('');
  for (const r of counted) {
    console.log(
      `${`${r.name} / limits off:`.padEnd(36)} p50 ×${(r.p50 / off.p50).toFixed(2)}, p99 ×${(r.p99 / off.p99).toFixed(2)}, req/s ×${(r.rps / off.rps).toFixed(2)}`,
    );
  }
  console.log('\nRateLimiter.hit alone, one window, sequential calls:');
  for (const r of hitTimes) console.log(`${r.name.padEnd(28)} p50 ${r.p50.toFixed(0).padStart(5)} µs   p99 ${r.p99.toFixed(0).padStart(5)} µs`);
  console.log('');
} finally {
  for (const stop of stops.reverse()) await stop().catch((error) => console.error('stop failed:', error));
}
