import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRINCIPAL_HEADER, signPrincipal } from '../../core/principal.js';
import { openIdentityStore } from '../../identity/index.js';
import { LocalKeyStore } from '../../identity/local-key-store.js';
import { ensureDatabaseExists, startEmbeddedPostgres } from '../../platform/database.js';
import { createMembershipSubgraph } from '../../subgraphs/membership/index.js';
import type { RunningService } from '../../core/listen.js';
import { serveSubgraph } from '../../subgraphs/shared/server.js';
import type { Subgraph } from '../../subgraphs/shared/subgraph.js';
import type { MikroORM } from '@mikro-orm/postgresql';
import { capturedLogger } from '../support/captured-logger.js';
import { freePort } from '../support/free-port.js';
import { principalFor, TEST_SECRET } from '../support/subgraph-harness.js';

/**
 * A subgraph whose database goes away under it (a PostgreSQL of this file's own, stopped and
 * started again): its answers say SERVICE_UNAVAILABLE with the request id, which the edge turns
 * into 503 and Retry-After, never a masked internal error; once the database is back the same
 * process serves again on its pool.
 */
let dir: string;
let port: number;
let database: Awaited<ReturnType<typeof startEmbeddedPostgres>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;
let served: RunningService;
const { logger, lines } = capturedLogger();
const principal = principalFor('down');

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'database-down-'));
  port = await freePort();
  database = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port });
  const url = await ensureDatabaseExists(database.serverUrl, 'platform');
  identityOrm = await openIdentityStore(url);
  subgraph = await createMembershipSubgraph({ databaseUrl: url, internalSecret: TEST_SECRET, keyStore: new LocalKeyStore(identityOrm) });
  served = await serveSubgraph(subgraph, { port: await freePort(), logger });
}, 120_000);

afterAll(async () => {
  await served?.stop();
  await subgraph?.close();
  await identityOrm?.close(true);
  await database?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function ask(query: string, requestId: string) {
  const response = await fetch(served.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [PRINCIPAL_HEADER]: signPrincipal(principal, TEST_SECRET), 'x-request-id': requestId },
    body: JSON.stringify({ query }),
  });
  return (await response.json()) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

const CREATE = 'mutation { createMember(name: "Kept", email: "kept@example.org") { id } }';
const LIST = '{ members(limit: 10) { data { name } } }';

describe('a subgraph whose database is down', () => {
  it('answers SERVICE_UNAVAILABLE with the request id, not an internal error, and serves again once it is back', async () => {
    expect((await ask(CREATE, 'req_before')).errors).toBeUndefined();

    await database.stop();
    for (const [query, requestId] of [
      [LIST, 'req_down_read'],
      [CREATE, 'req_down_write'],
    ]) {
      const answer = await ask(query, requestId);
      expect(answer.errors?.[0]?.extensions).toEqual({ code: 'SERVICE_UNAVAILABLE', reason: 'service_unavailable', requestId });
      // Nothing of where the database is or what the driver said.
      expect(JSON.stringify(answer)).not.toMatch(new RegExp(`${port}|127\\.0\\.0\\.1|ECONNREFUSED`));
    }
    // The log has the cause, under the request id.
    expect(lines.some((line) => line.requestId === 'req_down_read' && JSON.stringify(line.err).includes('ECONNREFUSED'))).toBe(true);

    database = await startEmbeddedPostgres({ dir: path.join(dir, 'postgres'), port });
    expect((await ask(CREATE.replace(/Kept|kept/g, (word) => `${word}2`), 'req_after')).errors).toBeUndefined();
    expect((await ask(LIST, 'req_after_read')).data).toEqual({ members: { data: expect.arrayContaining([{ name: 'Kept' }, { name: 'Kept2' }]) } });
  }, 120_000);
});
