import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { portIsFree } from '../../platform/database.js';
import { postgresRunAs } from '../../platform/embedded-postgres.js';
import { freePort } from '../support/free-port.js';
import { processTree, running } from '../support/process-tree.js';
import { spawnService, type ServiceProcess } from '../support/service-process.js';
import { logLinesOf } from '../support/supervised-output.js';

/**
 * `npm start`'s topology on its embedded PostgreSQL (no DATABASE_URL), as launch.mjs runs it. The
 * database is SIGKILLed and held down for a while: requests answer 503 with Retry-After in each
 * interface's error body, /health names the database without its address, the supervisor
 * restarts it with backoff, and once it is back every acknowledged write is there and new ones
 * succeed. SIGTERM then stops every process, PostgreSQL's included.
 */
let dataDir: string;
let port: number;
let databasePort: number;
let platform: ServiceProcess | undefined;
let baseUrl: string;
let key: string;
let textKey: string;
let tracerouteKey: string;
/** Every process seen in the platform's tree, for the final check and for afterAll. */
const seen = new Set<number>();

const logLines = () => logLinesOf(platform!.output());

async function waitFor(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (platform?.child.exitCode !== null) throw new Error(`the platform exited while waiting for ${what}:\n${platform?.output().slice(-4000)}`);
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}:\n${platform?.output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const auth = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const createMember = (name: string) =>
  fetch(`${baseUrl}/api/v1/members`, { method: 'POST', headers: auth(), body: JSON.stringify({ name, email: `${name.toLowerCase()}@example.org` }) });
async function memberNames(): Promise<string[]> {
  const response = await fetch(`${baseUrl}/api/v1/members?limit=100`, { headers: auth() });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: { name: string }[] }).data.map((member) => member.name).sort();
}
const graphql = (query: string) => fetch(`${baseUrl}/graphql`, { method: 'POST', headers: auth(), body: JSON.stringify({ query }) });
const health = () => fetch(`${baseUrl}/health`);

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'database-crash-'));
  port = await freePort();
  databasePort = await freePort();
  const { DATABASE_URL: _ignored, INTERNAL_SECRET: _generated, ...inherited } = process.env;
  platform = spawnService(
    'node',
    ['platform/supervisor/launch.mjs'],
    {
      ...inherited,
      NODE_ENV: 'development',
      // The supervisor logs each exit and restart, which the test follows.
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(port),
      EMBEDDED_PG_PORT: String(databasePort),
      EDGE_WORKERS: '1',
      MEMBERSHIP_PORT: String(await freePort()),
      MARKETPLACE_PORT: String(await freePort()),
      INFERENCE_PORT: String(await freePort()),
      TRACEROUTE_PORT: String(await freePort()),
    },
    { detached: true },
  );
  await waitFor(() => platform!.output().includes('Platform is up.'), 'the platform to start', 280_000);
  baseUrl = `http://127.0.0.1:${port}`;
  // As the services connect: the role and password the platform generated under DATA_DIR.
  const password = readFileSync(path.join(dataDir, 'postgres-service-password'), 'utf8').trim();
  const identityOrm = await openIdentityStore(`postgres://platform_service:${encodeURIComponent(password)}@127.0.0.1:${databasePort}/platform`);
  try {
    const keys = new IdentityService(identityOrm.em.fork());
    key = (await keys.createKey({ account: 'crash', kind: 'live' })).secret;
    textKey = (await keys.createKey({ account: 'crash', kind: 'text' })).secret;
    tracerouteKey = (await keys.createKey({ account: 'crash', kind: 'traceroute' })).secret;
  } finally {
    await identityOrm.close(true);
  }
}, 300_000);

afterAll(async () => {
  // A failed test must not leave processes behind.
  if (platform) for (const pid of processTree(platform.child.pid!)) seen.add(pid);
  for (const pid of seen) if (running(pid)) process.kill(pid, 'SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

describe('npm start when its embedded PostgreSQL dies', () => {
  it('answers 503 with Retry-After meanwhile, restarts the database with backoff, and loses no acknowledged write', async () => {
    const acknowledged = ['Ada', 'Grace', 'Edsger', 'Barbara', 'Donald'];
    for (const name of acknowledged) expect((await createMember(name)).status).toBe(201);
    expect(await memberNames()).toEqual([...acknowledged].sort());

    const lockFile = path.join(dataDir, 'postgres', 'postmaster.pid');
    const postmaster = Number(readFileSync(lockFile, 'utf8').split('\n')[0]);
    for (const pid of processTree(postmaster)) seen.add(pid);
    // Holds the database down: its lock file names a live process of PostgreSQL's user, so every
    // restart refuses to start (as it would beside another server) until that process is gone.
    const runAs = await postgresRunAs();
    const holder: ChildProcess = spawn('sleep', ['600'], { ...runAs, stdio: 'ignore' });
    try {
      process.kill(postmaster, 'SIGKILL');
      const lines = readFileSync(lockFile, 'utf8').split('\n');
      writeFileSync(lockFile, [String(holder.pid), ...lines.slice(1)].join('\n'));
      await waitFor(() => !running(postmaster), 'PostgreSQL to die', 10_000);

      // REST: 503 in the membership interface's body, with Retry-After and the request id.
      const listed = await fetch(`${baseUrl}/api/v1/members`, { headers: auth() });
      expect(listed.status).toBe(503);
      expect(Number(listed.headers.get('retry-after'))).toBeGreaterThan(0);
      const listedBody = (await listed.json()) as { error: { type: string; code: string; message: string; request_id: string } };
      expect(listedBody.error).toMatchObject({ type: 'api_error', code: 'service_unavailable', request_id: listed.headers.get('x-request-id') });
      expect(JSON.stringify(listedBody)).not.toMatch(new RegExp(`${databasePort}|127\\.0\\.0\\.1|ECONNREFUSED`));
      const refused = await createMember('Refused');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).not.toBeNull();

      // Every interface in its own error body.
      const models = await fetch(`${baseUrl}/inference/text/v1/models`, { headers: { authorization: `Bearer ${textKey}` } });
      expect(models.status).toBe(503);
      expect(models.headers.get('retry-after')).not.toBeNull();
      expect(((await models.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
      const traces = await fetch(`${baseUrl}/v1/public/traces`, { headers: { 'x-api-key': tracerouteKey } });
      expect(traces.status).toBe(503);
      expect(traces.headers.get('retry-after')).not.toBeNull();
      expect(await traces.json()).toMatchObject({ error: 'service_unavailable', request_id: traces.headers.get('x-request-id') });

      // GraphQL: SERVICE_UNAVAILABLE with the request id.
      const asked = await graphql('{ members(limit: 1) { data { id } } }');
      const askedBody = (await asked.json()) as { errors?: { message: string; extensions?: { code?: string; requestId?: string } }[] };
      expect(askedBody.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      expect(askedBody.errors?.[0]?.extensions?.requestId).toBe(asked.headers.get('x-request-id'));
      expect(JSON.stringify(askedBody)).not.toMatch(new RegExp(`${databasePort}|127\\.0\\.0\\.1|ECONNREFUSED`));

      // /health names the database, and nothing of its address or the driver's error.
      const down = await health();
      expect(down.status).toBe(503);
      const downText = await down.text();
      expect((JSON.parse(downText) as { checks: Record<string, string> }).checks.database).toBe('unreachable');
      expect(downText).not.toMatch(new RegExp(`${databasePort}|127\\.0\\.0\\.1|ECONNREFUSED|connect`));

      // The supervisor saw the kill and keeps trying, with growing waits.
      await waitFor(() => logLines().filter((line) => line.service === 'postgres' && line.exitCode === 1).length >= 2, 'two refused restarts', 60_000);
      const exits = logLines().filter((line) => line.service === 'postgres' && typeof (line as { restartInMs?: number }).restartInMs === 'number');
      expect(exits[0]).toMatchObject({ signal: 'SIGKILL' });
      const waits = exits.map((line) => (line as { restartInMs: number }).restartInMs);
      expect(waits.slice(0, 3)).toEqual([500, 1000, 2000]);
    } finally {
      holder.kill('SIGKILL');
    }

    // Back: /health recovers, a write succeeds, and every acknowledged write is there once.
    await waitFor(async () => (await health()).status === 200, 'the database to be back', 120_000);
    expect(logLines().some((line) => line.msg === 'postgres is back')).toBe(true);
    expect((await createMember('After')).status).toBe(201);
    expect(await memberNames()).toEqual([...acknowledged, 'After'].sort());
    const again = (await (await graphql('{ members(limit: 10) { data { name } } }')).json()) as { errors?: unknown; data?: { members: { data: unknown[] } } };
    expect(again.errors).toBeUndefined();
    expect(again.data?.members.data).toHaveLength(acknowledged.length + 1);
    // The services rode it out on their connection pools: none of them exited.
    expect(logLines().filter((line) => line.service !== 'postgres' && line.msg?.includes('exited unexpectedly'))).toEqual([]);
  }, 240_000);

  it('stops every process, PostgreSQL included, on SIGTERM', async () => {
    for (const pid of processTree(platform!.child.pid!)) seen.add(pid);
    // The launcher, the supervisor, four subgraphs, the edge's primary and worker, PostgreSQL and its own processes.
    expect(seen.size).toBeGreaterThan(9);
    process.kill(platform!.child.pid!, 'SIGTERM');
    expect(await platform!.exited).toBe(0);
    expect([...seen].filter(running)).toEqual([]);
    expect(await portIsFree(databasePort)).toBe(true);
    await expect(health()).rejects.toThrow();
  }, 60_000);
});
