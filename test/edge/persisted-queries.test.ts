import { createHash } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.js';
import type { RunningService } from '../../core/listen.js';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { SUBGRAPH_NAMES, type SubgraphName } from '../../platform/config.js';
import { startEdgeService } from '../../platform/platform.js';
import { createTestDatabase } from '../support/database.js';
import { testConfig } from '../support/platform-harness.js';
import { redisServerMissing, startRedisServer, type RunningRedis } from '../support/redis-server.js';

/**
 * Automatic persisted queries across two edge replicas sharing REDIS_URL: a query registered
 * through one is found by its hash alone on the other.
 */
const missing = redisServerMissing();
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let redis: RunningRedis;
const edges: RunningService[] = [];
let key: string;

// __typename needs no subgraph.
const nowhere = Object.fromEntries(SUBGRAPH_NAMES.map((name) => [name, 'http://127.0.0.1:1/graphql'])) as Record<SubgraphName, string>;

beforeAll(async () => {
  if (missing) return;
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  key = (await new IdentityService(identityOrm.em.fork()).createKey({ account: 'apq', kind: 'live' })).secret;
  redis = await startRedisServer();
  for (let i = 0; i < 2; i++) edges.push(await startEdgeService(testConfig({ redisUrl: redis.url }), identityOrm, nowhere, createLogger('silent')));
}, 60_000);

afterAll(async () => {
  for (const edge of edges) await edge.stop();
  await redis?.stop();
  await identityOrm?.close(true);
  await db?.drop();
});

/** A POST of an automatic persisted query: its hash, and the query itself when `withQuery`. */
async function persisted(edge: RunningService, query: string, withQuery: boolean) {
  const sha256Hash = createHash('sha256').update(query).digest('hex');
  const response = await fetch(`http://127.0.0.1:${edge.port}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...(withQuery ? { query } : {}), extensions: { persistedQuery: { version: 1, sha256Hash } } }),
  });
  return (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
}

describe.skipIf(missing)(`automatic persisted queries with REDIS_URL${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a query registered through one edge is found by its hash on the other', async () => {
    const query = `{ __typename a${Date.now()}: __typename }`;
    // Unknown anywhere before it is registered: the client is told to send it whole.
    expect((await persisted(edges[1], query, false)).errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect(await persisted(edges[0], query, true)).toEqual({ data: { __typename: 'Query', [`a${query.match(/a(\d+)/)![1]}`]: 'Query' } });
    const byHash = await persisted(edges[1], query, false);
    expect(byHash.errors).toBeUndefined();
    expect(byHash.data).toMatchObject({ __typename: 'Query' });
    // Kept for a day, not for ever: Redis is not filled by every query ever registered.
    const client = new Redis(redis.url);
    try {
      const keys = await client.keys('edge:apq:*');
      expect(keys).toHaveLength(1);
      const ttl = await client.ttl(keys[0]);
      expect(ttl).toBeGreaterThan(86_000);
      expect(ttl).toBeLessThanOrEqual(86_400);
    } finally {
      client.disconnect();
    }
  });
});
