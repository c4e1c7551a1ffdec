import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { spawnService, type ServiceProcess } from '../support/service-process.js';
import { alive, logLinesOf, startedPidsOf } from '../support/supervised-output.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';

/**
 * `npm start` stopping (SIGTERM, as a service manager sends it) while a request is under way at
 * the edge: the edge stops accepting and answers it, over the subgraphs that are still up, and
 * only then do the subgraphs stop. The request's body is held back until the stop has begun, so
 * the edge forwards it to its subgraph after the SIGTERM.
 */
let dataDir: string;
let database: { url: string; drop(): Promise<void> };
let identityOrm: MikroORM | undefined;
let platform: ServiceProcess | undefined;
let port: number;
let key: string;

const logLines = () => logLinesOf(platform!.output());
const startedPids = () => startedPidsOf(platform!.output());

/** Waits for `predicate`, checked every 100 ms; the bound only keeps a broken platform from hanging the test. */
async function waitFor(predicate: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}:\n${platform?.output().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'supervisor-stop-'));
  database = await createTestDatabase();
  port = await freePort();
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  platform = spawnService(
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
    },
    { detached: true },
  );
  await waitFor(() => platform!.output().includes('Platform is up.') || platform!.child.exitCode !== null, 'the platform to start', 280_000);
  expect(platform.child.exitCode, platform.output()).toBeNull();
  identityOrm = await openIdentityStore(database.url);
  key = (await new IdentityService(identityOrm.em.fork()).createKey({ account: 'stop-order', kind: 'live' })).secret;
}, 300_000);

afterAll(async () => {
  if (platform && platform.child.exitCode === null) {
    process.kill(-platform.child.pid!, 'SIGKILL');
    for (const pids of startedPids().values()) for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  await identityOrm?.close(true);
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('npm start stopping with a request under way', () => {
  it('answers the request over its subgraph, then stops the subgraphs, and exits 0', async () => {
    const body = JSON.stringify({ query: '{ members(limit: 1) { data { id } } }' });
    const socket = net.connect(port, '127.0.0.1');
    socket.setEncoding('utf8');
    let received = '';
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // Expect: 100-continue: node answers "100 Continue" once the request is handed to the edge's
    // handler, which tells the test the request is under way at a worker.
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await waitFor(() => received.includes('100 Continue'), 'the edge to take the request');
    const pids = [...startedPids().values()].flat();
    const [edgePid] = startedPids().get('gateway')!;
    const [membershipPid] = startedPids().get('membership')!;
    const workers = [...(startedPids().get('gateway worker 1') ?? []), ...(startedPids().get('gateway worker 2') ?? [])];
    expect(workers).toHaveLength(2);

    process.kill(platform!.child.pid!, 'SIGTERM');
    // Both edge workers have begun to stop, and the subgraphs are gone or left for later.
    await waitFor(() => workers.every((pid) => logLines().some((line) => line.msg === 'stopping' && line.pid === pid)), 'the edge workers to stop');
    await waitFor(
      () => logLines().some((line) => line.msg?.startsWith('stopping the edge;') || (line.pid === membershipPid && line.msg === 'stopped')),
      'the supervisor to order the stop',
    );

    socket.write(body);
    await closed;
    const [head, answer] = received.slice(received.indexOf('\r\n\r\n') + 4).split('\r\n\r\n');
    expect(head, received).toMatch(/^HTTP\/1\.1 200 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(answer)).toEqual({ data: { members: { data: [] } } });

    expect(await platform!.exited).toBe(0);
    expect(pids.filter(alive)).toEqual([]);
    // The subgraphs stopped after the edge had.
    const lines = logLines();
    const edgeStopped = lines.findIndex((line) => line.pid === edgePid && line.msg === 'stopped');
    const membershipStopping = lines.findIndex((line) => line.pid === membershipPid && line.msg === 'stopping');
    expect(edgeStopped).toBeGreaterThanOrEqual(0);
    expect(membershipStopping).toBeGreaterThan(edgeStopped);
  }, 120_000);
});
