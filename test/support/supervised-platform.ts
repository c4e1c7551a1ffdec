import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { createTestDatabase } from './database.js';
import { freePort } from './free-port.js';
import { spawnService, type ServiceProcess } from './service-process.js';
import { alive, logLinesOf, startedPidsOf, type SupervisorLogLine } from './supervised-output.js';
import { TEST_SECRET } from './subgraph-harness.js';

/** `npm start` under a test, ready, with a live key; `close` leaves no process, database or data behind. */
export interface SupervisedPlatform {
  process: ServiceProcess;
  port: number;
  baseUrl: string;
  databaseUrl: string;
  key: string;
  /** A new live key of `account`, made in the platform's key store. */
  createKey(account: string): Promise<string>;
  logLines(): SupervisorLogLine[];
  /** Every process id the supervisor and the edge's primary started, by service name (latest last). */
  startedPids(): Map<string, number[]>;
  /** Waits for `predicate`, checked every 100 ms; fails if the platform exits, and the bound only keeps a broken platform from hanging the test. */
  waitFor(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs?: number): Promise<void>;
  /** Ctrl-C and its end when the platform still runs ('SIGINT'), or SIGKILL to every process it started; then its database and data go. */
  close(how?: 'SIGINT' | 'SIGKILL'): Promise<void>;
}

/**
 * `npm start`'s topology as the launcher runs it (platform/supervisor/launch.mjs: dist/ built when
 * stale, then the supervisor): a test database, each service on a free port, two edge workers,
 * the supervisor's start lines logged (LOG_LEVEL info), in a process group of its own so that a
 * signal to the group reaches it as a terminal's Ctrl-C would. `env` adds settings.
 */
export async function startSupervisedPlatform(options: { name: string; env?: Record<string, string> }): Promise<SupervisedPlatform> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `${options.name}-`));
  const database = await createTestDatabase();
  const port = await freePort();
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  const platform = spawnService(
    'node',
    ['platform/supervisor/launch.mjs'],
    {
      ...inherited,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      INTERNAL_SECRET: TEST_SECRET,
      HOST: '127.0.0.1',
      PORT: String(port),
      EDGE_WORKERS: '2',
      MEMBERSHIP_PORT: String(await freePort()),
      MARKETPLACE_PORT: String(await freePort()),
      INFERENCE_PORT: String(await freePort()),
      TRACEROUTE_PORT: String(await freePort()),
      ...options.env,
    },
    { detached: true },
  );
  let identityOrm: MikroORM | undefined;
  const startedPids = () => startedPidsOf(platform.output());
  const waitFor = async (predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 120_000) => {
    const until = Date.now() + timeoutMs;
    while (!(await predicate())) {
      if (platform.child.exitCode !== null) throw new Error(`the platform exited while waiting for ${what}:\n${platform.output()}`);
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}:\n${platform.output().slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const close = async (how: 'SIGINT' | 'SIGKILL' = 'SIGINT') => {
    if (platform.child.exitCode === null) {
      process.kill(-platform.child.pid!, how);
      if (how === 'SIGINT') await platform.exited;
      else for (const pids of startedPids().values()) for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    await identityOrm?.close(true);
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(() => platform.output().includes('Platform is up.'), 'the platform to start', 280_000);
    identityOrm = await openIdentityStore(database.url);
    const store = identityOrm;
    const createKey = async (account: string) => (await new IdentityService(store.em.fork()).createKey({ account, kind: 'live' })).secret;
    const key = await createKey(options.name);
    return {
      process: platform,
      port,
      baseUrl: `http://127.0.0.1:${port}`,
      databaseUrl: database.url,
      key,
      createKey,
      logLines: () => logLinesOf(platform.output()),
      startedPids,
      waitFor,
      close,
    };
  } catch (error) {
    await close('SIGKILL');
    throw error;
  }
}
