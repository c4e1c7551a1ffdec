/**
 * What the benches share: a platform started in this process on a temporary embedded PostgreSQL
 * (or DATABASE_URL), with limits no run trips, a live key to call it with, and the timing helpers.
 * Each bench used to copy this start-up; one copy keeps their set-ups alike and so their figures comparable.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { loadConfig, type PlatformConfig } from '../platform/config.js';
import { openPlatformDatabase } from '../platform/database.js';
import { openIdentityStore } from '../identity/index.js';
import { percentile } from './percentile.js';
import { IdentityService } from '../identity/identity.service.js';
import { createLogger } from '../core/logger.js';
import { startPlatform, type RunningPlatform } from '../platform/platform.js';
import type { Principal } from '../core/principal.js';
import { freePort } from '../test/support/free-port.js';

/** Whether this bench runs compiled (dist/bench/, through bench/run.mjs) or from its source under tsx. */
export const COMPILED = path.basename(path.resolve(import.meta.dirname, '..')) === 'dist';
/** The repository's root, from either place. */
export const ROOT = path.resolve(import.meta.dirname, COMPILED ? '../..' : '..');
/** The command line that runs another bench file (`fanout-instance`) the way this one runs. */
export function benchCommand(name: string): string[] {
  return COMPILED ? [process.execPath, path.join(ROOT, 'dist/bench', `${name}.js`)] : [path.join(ROOT, 'node_modules/.bin/tsx'), path.join(ROOT, 'bench', `${name}.ts`)];
}

/** Limits so high that no run trips them: every request is still counted and admitted. */
export const NEVER_LIMITED = Number.MAX_SAFE_INTEGER;

export interface BenchPlatform {
  config: PlatformConfig;
  /** The database's connection URL (for direct SQL beside the platform). */
  databaseUrl: string;
  platform: RunningPlatform;
  identityOrm: MikroORM;
  logger: Logger;
  /** A live key of account `bench`: its secret for requests, its principal for signing directly. */
  key: { secret: string; principal: Principal };
  /** Stops whatever started, in reverse order; safe to call once from a `finally`. */
  stop(): Promise<void>;
}

/**
 * Starts the platform for a bench: ports picked free (a bench runs beside a platform that is up),
 * logging silent, rate limits that never refuse. `overrides` changes the configuration further.
 */
export async function startBenchPlatform(name: string, overrides: Partial<PlatformConfig> = {}): Promise<BenchPlatform> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `bench-${name}-`));
  const stops: (() => Promise<unknown>)[] = [() => rm(dataDir, { recursive: true, force: true })];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) await step().catch((error) => console.error('bench stop:', error));
  };
  try {
    const embeddedPort = process.env.EMBEDDED_PG_PORT ?? String(await freePort());
    const base = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: embeddedPort });
    const config: PlatformConfig = {
      ...base,
      port: 0,
      host: '127.0.0.1',
      subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
      rateLimits: { livePerMinute: NEVER_LIMITED, testPerMinute: NEVER_LIMITED, inferencePerMinute: NEVER_LIMITED, anonymousPerMinute: NEVER_LIMITED },
      ...overrides,
    };
    const database = await openPlatformDatabase({ databaseUrl: config.databaseUrl, dataDir, embeddedPort: config.embeddedDatabasePort });
    stops.push(() => database.stop());
    const logger = createLogger('silent');
    const platform = await startPlatform(config, database.url, logger);
    stops.push(() => platform.stop());
    const identityOrm = await openIdentityStore(database.url);
    stops.push(() => identityOrm.close());
    const identity = new IdentityService(identityOrm.em.fork());
    const { secret } = await identity.createKey({ account: 'bench', kind: 'live' });
    const auth = await identity.authenticate(secret);
    if (!auth.ok) throw new Error('the bench key does not authenticate');
    return { config, databaseUrl: database.url, platform, identityOrm, logger, key: { secret, principal: auth.principal }, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The rows of GET /api/v1/members?limit=20 (a page of 20 and one to tell whether more follow), as one SQL statement. */
export const MEMBER_PAGE_SQL = `select * from membership.member where account_id = $1 and mode = 'live' and deleted_at is null order by created_at desc, id desc limit 21`;

/** A V8 CPU profile of this process while `run` runs, sampled every `intervalUs`, written to `out` (docs/profiling.md). */
export async function profileWhile<T>(out: string, run: () => Promise<T>, intervalUs = 200): Promise<T> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.post('Profiler.start');
    const result = await run();
    const { profile } = await session.post('Profiler.stop');
    await writeFile(out, JSON.stringify(profile));
    return result;
  } finally {
    session.disconnect();
  }
}

export { percentile };

/**
 * Like `measure` for several functions at once, taking turns call by call, so a machine that
 * changes speed mid-run slows them alike and their ratio holds. Returns p50/p99 in ms of each.
 */
export async function measureAlternating(n: number, fns: (() => Promise<void>)[]): Promise<{ p50: number; p99: number }[]> {
  for (let i = 0; i < Math.max(3, Math.ceil(n / 10)); i++) for (const fn of fns) await fn();
  const times = fns.map((): number[] => []);
  for (let i = 0; i < n; i++) {
    for (const [index, fn] of fns.entries()) {
      const start = performance.now();
      await fn();
      times[index].push(performance.now() - start);
    }
  }
  return times.map((list) => {
    list.sort((a, b) => a - b);
    return { p50: percentile(list, 50), p99: percentile(list, 99) };
  });
}

/** Runs `fn` `n` times one after another (after a warm-up of a tenth) and returns p50/p99 in ms. */
export async function measure(n: number, fn: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  return (await measureAlternating(n, [fn]))[0];
}
