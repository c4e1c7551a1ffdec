import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { createLogger } from '../../core/logger.js';
import { startEdgeService } from '../../platform/platform.js';
import type { RunningService } from '../../core/listen.js';
import { PRINCIPAL_HEADER, verifyPrincipal, type Principal } from '../../core/principal.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { testConfig } from '../support/platform-harness.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';

/**
 * No inference field reads the plan yet, so a loopback server stands in for the inference
 * subgraph at its URL: it records the signed principal header of every request the edge sends
 * and verifies it as the subgraph would.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let edge: RunningService;
let inference: Server;
let received: (string | undefined)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  inference = createServer((req, res) => {
    received.push(req.headers[PRINCIPAL_HEADER] as string | undefined);
    req.resume().on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: { providers: [{ id: 'provider_a' }] } }));
    });
  });
  await new Promise<void>((resolve) => inference.listen(0, '127.0.0.1', resolve));
  const inferenceUrl = `http://127.0.0.1:${(inference.address() as AddressInfo).port}/graphql`;
  // The other subgraphs are not running: the query below is planned for inference alone.
  const nowhere = `http://127.0.0.1:${await freePort()}/graphql`;
  edge = await startEdgeService(
    testConfig(),
    identityOrm,
    { membership: nowhere, marketplace: nowhere, inference: inferenceUrl, traceroute: nowhere },
    createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
  );
});

afterAll(async () => {
  await edge?.stop();
  await new Promise((resolve) => inference?.close(resolve));
  await identityOrm?.close(true);
  await db?.drop();
});

function identity(): IdentityService {
  return new IdentityService(identityOrm.em.fork());
}

/** Asks the edge for the inference subgraph's `providers` with `secret`; returns the principal the subgraph verified. */
async function principalSeenByInference(secret: string): Promise<Principal> {
  received = [];
  const response = await fetch(edge.url, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ providers { id } }' }),
  });
  expect(await response.json()).toEqual({ data: { providers: [{ id: 'provider_a' }] } });
  expect(received).toHaveLength(1);
  return verifyPrincipal(received[0], TEST_SECRET);
}

describe("a key's inference plan at the inference subgraph", () => {
  it.each(['text', 'image'])('reaches it in the signed principal of a %s key issued on a plan', async (kind) => {
    const key = await identity().createKey({ account: 'plans-a', kind, plan: 'pro' });
    expect(await principalSeenByInference(key.secret)).toMatchObject({ keyId: key.id, kind, account: 'plans-a', plan: 'pro' });
  });

  it('is absent for a text key on the default plan and for a live key', async () => {
    const text = await identity().createKey({ account: 'plans-b', kind: 'text' });
    const seen = await principalSeenByInference(text.secret);
    expect(seen).toMatchObject({ keyId: text.id, kind: 'text' });
    expect(seen).not.toHaveProperty('plan');
    const live = await identity().createKey({ account: 'plans-b', kind: 'live' });
    expect(await principalSeenByInference(live.secret)).not.toHaveProperty('plan');
  });

  it("follows a change of the key's plan on the next request", async () => {
    const key = await identity().createKey({ account: 'plans-c', kind: 'text', plan: 'standard' });
    expect((await principalSeenByInference(key.secret)).plan).toBe('standard');
    await identity().setKeyPlan(key.id, 'pro');
    expect((await principalSeenByInference(key.secret)).plan).toBe('pro');
  });
});
