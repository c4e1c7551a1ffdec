import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portIsFree } from '../../platform/database.js';
import { freePort } from '../support/free-port.js';
import { PROJECT_ROOT, spawnService, TSX, type ServiceProcess } from '../support/service-process.js';

let dataDir: string;
let env: NodeJS.ProcessEnv;
let port: number;

/** Runs `npm start` the way a user does; resolves with the process once it says it is up. */
function start(how: 'npm' | 'script' = 'npm'): ServiceProcess {
  // `script` runs what `npm start` runs, without npm in between, so its own exit code is seen.
  const [command, args] = how === 'npm' ? ['npm', ['start', '--silent']] : ['node', ['platform/supervisor/launch.mjs']];
  // A process group of its own: the test signals the group, as a terminal's Ctrl-C would.
  const platform = spawnService(command, args, env, { detached: true });
  started.push(platform);
  return platform;
}

/** Every `npm start` this file ran, stopped in afterAll if a failed test left it running. */
const started: ServiceProcess[] = [];

/**
 * What a failed wait reports: the process's output, and what a start can wait on without saying
 * so (the build locks of dist/ and of the dashboard).
 */
function startState(platform: ServiceProcess): string {
  const locks = [path.join(PROJECT_ROOT, 'dist/.build-lock'), path.join(PROJECT_ROOT, 'dashboard/.build.lock')].filter((lock) => existsSync(lock));
  return `locks held: ${locks.map((lock) => path.relative(PROJECT_ROOT, lock)).join(', ') || 'none'}\noutput:\n${platform.output().slice(-6000)}`;
}

/** Waits until `platform` says it is up; throws with its output when it exits first or takes too long. */
async function waitUntilUp(platform: ServiceProcess, what: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!platform.output().includes('Platform is up.')) {
    if (platform.child.exitCode !== null || platform.child.signalCode !== null) {
      throw new Error(`${what}: the process exited (${platform.child.exitCode ?? platform.child.signalCode}) before it was up\n${startState(platform)}`);
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n${startState(platform)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function waitForAsync(predicate: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'platform-start-'));
  port = await freePort();
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  env = {
    ...inherited,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    PORT: String(port),
    EMBEDDED_PG_PORT: String(await freePort()),
    MEMBERSHIP_PORT: String(await freePort()),
    MARKETPLACE_PORT: String(await freePort()),
    INFERENCE_PORT: String(await freePort()),
    TRACEROUTE_PORT: String(await freePort()),
  };
});

afterAll(async () => {
  for (const platform of started) {
    if (platform.child.exitCode !== null || platform.child.signalCode !== null) continue;
    try {
      process.kill(-platform.child.pid!, 'SIGTERM');
    } catch {}
    await Promise.race([platform.exited, new Promise((r) => setTimeout(r, 15_000))]);
  }
  await rm(dataDir, { recursive: true, force: true });
});

describe('npm start on the embedded database', () => {
  it('comes up healthy, refuses a second start on the same ports, keeps data, and stops cleanly on SIGTERM', async () => {
    const first = start();
    // The first start may build dist/ first.
    await waitUntilUp(first, 'the platform to start', 240_000);
    expect(first.output()).toContain(`http://localhost:${port}/graphql`);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);

    // A key from the command-line tool, used while the platform runs, and a member made with it.
    const cli = spawnSync(TSX, ['cli/main.ts', 'keys', 'create', '--kind', 'live', '--account', 'acme'], {
      cwd: PROJECT_ROOT,
      env: { ...env, PATH: `${path.join(PROJECT_ROOT, 'node_modules/.bin')}:${env.PATH}` },
      encoding: 'utf8',
    });
    expect(cli.status, cli.stderr).toBe(0);
    const { secret } = JSON.parse(cli.stdout) as { secret: string };
    const auth = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const created = await fetch(`http://127.0.0.1:${port}/api/v1/members`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Kept', email: 'kept@example.org' }),
    });
    expect(created.status).toBe(201);

    const second = start();
    expect(await second.exited).toBe(1);
    expect(second.output()).toMatch(new RegExp(`port ${port} .* already in use`));

    process.kill(-first.child.pid!, 'SIGTERM');
    await first.exited;
    // npm exits first; the platform and its PostgreSQL finish stopping just after.
    await waitForAsync(() => portIsFree(Number(env.EMBEDDED_PG_PORT)), 'the embedded PostgreSQL to stop', 15_000);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();

    // The embedded PostgreSQL stopped with it: a new start takes its port and data directory.
    const third = start('script');
    await waitUntilUp(third, 'the platform to start again', 120_000);
    const listed = await fetch(`http://127.0.0.1:${port}/api/v1/members`, { headers: { authorization: `Bearer ${secret}` } });
    expect(((await listed.json()) as { data: { name: string }[] }).data.map((m) => m.name)).toEqual(['Kept']);
    process.kill(-third.child.pid!, 'SIGINT');
    // 130 is how tsx reports a Ctrl-C it passed on; the shutdown itself ran (checked below).
    expect([0, 130]).toContain(await third.exited);
    expect(third.output()).not.toMatch(/error/i);
    expect(await portIsFree(Number(env.EMBEDDED_PG_PORT))).toBe(true);
    expect(await portIsFree(Number(env.MEMBERSHIP_PORT))).toBe(true);
  }, 480_000);
});
