import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { spawnService, TSX, type ServiceProcess } from '../support/service-process.js';
import { alive, logLinesOf, startedPidsOf } from '../support/supervised-output.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';

/**
 * The metrics of an edge of two workers (the gateway's entry, as `npm start` runs its edge):
 * METRICS_PORT is served by the cluster's primary, which sums what every worker counted.
 */
let dataDir: string;
let database: { url: string; drop(): Promise<void> };
let identityOrm: MikroORM | undefined;
let edge: ServiceProcess | undefined;
let port: number;
let metricsPort: number;
let key: string;

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (edge?.child.exitCode !== null) throw new Error(`the edge exited while waiting for ${what}:\n${edge?.output()}`);
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}:\n${edge?.output().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-metrics-'));
  database = await createTestDatabase();
  identityOrm = await openIdentityStore(database.url);
  key = (await new IdentityService(identityOrm.em.fork()).createKey({ account: 'metrics-cluster', kind: 'live' })).secret;
  port = await freePort();
  metricsPort = await freePort();
  const { REDIS_URL: _none, ...inherited } = process.env;
  edge = spawnService(TSX, ['platform/entries/gateway.ts'], {
    ...inherited,
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    INTERNAL_SECRET: TEST_SECRET,
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    EDGE_WORKERS: '2',
    // __typename needs no subgraph: none runs.
    MEMBERSHIP_URL: 'http://127.0.0.1:1/graphql',
    MARKETPLACE_URL: 'http://127.0.0.1:1/graphql',
    INFERENCE_URL: 'http://127.0.0.1:1/graphql',
    TRACEROUTE_URL: 'http://127.0.0.1:1/graphql',
  });
  await waitFor(() => edge!.output().includes('is up at'), 'the edge to start', 180_000);
}, 200_000);

afterAll(async () => {
  if (edge && edge.child.exitCode === null) {
    edge.child.kill('SIGTERM');
    await edge.exited;
  }
  for (const pids of edge ? startedPidsOf(edge.output()).values() : []) for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await identityOrm?.close(true);
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const requestIdOf = (line: object) => (line as { req?: { headers?: Record<string, string> } }).req?.headers?.['x-request-id'] ?? '';

/** `{ __typename }` on a connection of its own, so that requests spread over the workers. */
function typename(requestId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: '/graphql', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId } },
      (response) => {
        response.resume().on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ query: '{ __typename }' }));
  });
}

describe('metrics of an edge of two workers', () => {
  it("the primary's METRICS_PORT sums the requests both workers answered", async () => {
    const answeredBy = () => new Set(logLinesOf(edge!.output()).filter((line) => requestIdOf(line).startsWith('count-')).map((line) => line.pid));
    let sent = 0;
    for (let batch = 0; batch < 50 && answeredBy().size < 2; batch++) {
      const statuses = await Promise.all(Array.from({ length: 8 }, (_, i) => typename(`count-${batch}-${i}`)));
      expect(statuses.every((status) => status === 200)).toBe(true);
      sent += statuses.length;
      await waitFor(() => logLinesOf(edge!.output()).filter((line) => requestIdOf(line).startsWith(`count-${batch}-`)).length === 8, 'the request lines');
    }
    expect(answeredBy().size).toBe(2);

    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    const line = text.split('\n').find((l) => l.startsWith('platform_http_requests_total{') && l.includes('interface="graphql"') && l.includes('status="200"'));
    expect(Number(line?.slice(line.lastIndexOf(' ') + 1))).toBe(sent);
    // The public port does not serve them.
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
  }, 120_000);
});
