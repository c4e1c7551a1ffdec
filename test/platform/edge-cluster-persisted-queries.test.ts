import { createHash } from 'node:crypto';
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
 * Automatic persisted queries in an edge of two workers without Redis (the gateway's entry, as
 * `npm start` runs its edge): a query registered through one worker is found by its hash on both.
 */
let dataDir: string;
let database: { url: string; drop(): Promise<void> };
let identityOrm: MikroORM | undefined;
let edge: ServiceProcess | undefined;
let port: number;
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
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'edge-apq-'));
  database = await createTestDatabase();
  identityOrm = await openIdentityStore(database.url);
  key = (await new IdentityService(identityOrm.em.fork()).createKey({ account: 'apq-cluster', kind: 'live' })).secret;
  port = await freePort();
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

/** The x-request-id a request line logged. */
const requestIdOf = (line: object) => (line as { req?: { headers?: Record<string, string> } }).req?.headers?.['x-request-id'] ?? '';

/** A POST of an automatic persisted query on a connection of its own, so that requests spread over the workers. */
function persisted(query: string, withQuery: boolean, requestId: string): Promise<{ data?: unknown; errors?: { extensions?: { code?: string } }[] }> {
  const sha256Hash = createHash('sha256').update(query).digest('hex');
  const body = JSON.stringify({ ...(withQuery ? { query } : {}), extensions: { persistedQuery: { version: 1, sha256Hash } } });
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: '/graphql', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve(JSON.parse(text)));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

describe('automatic persisted queries in an edge of two workers, without Redis', () => {
  it('a query registered through one worker is found by its hash on every worker', async () => {
    const query = '{ __typename registered: __typename }';
    expect((await persisted(query, true, 'register')).errors).toBeUndefined();
    const workers = [...(startedPidsOf(edge!.output()).get('gateway worker 1') ?? []), ...(startedPidsOf(edge!.output()).get('gateway worker 2') ?? [])];
    expect(workers).toHaveLength(2);
    // Looked up by hash in batches of new connections until both workers have answered some.
    const answeredBy = () => new Set(logLinesOf(edge!.output()).filter((line) => requestIdOf(line).startsWith('lookup-')).map((line) => line.pid));
    const answers = [];
    for (let batch = 0; batch < 50 && answeredBy().size < 2; batch++) {
      answers.push(...(await Promise.all(Array.from({ length: 8 }, (_, i) => persisted(query, false, `lookup-${batch}-${i}`)))));
      await waitFor(() => logLinesOf(edge!.output()).filter((line) => requestIdOf(line).startsWith(`lookup-${batch}-`)).length === 8, 'the request lines');
    }
    expect([...answeredBy()].sort()).toEqual([...workers].sort());
    for (const answer of answers) {
      expect(answer.errors).toBeUndefined();
      expect(answer.data).toEqual({ __typename: 'Query', registered: 'Query' });
    }
  }, 120_000);
});
