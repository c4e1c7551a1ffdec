import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUBGRAPH_NAMES, type SubgraphName } from '../../platform/config.js';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { LocalKeyStore } from '../../identity/local-key-store.js';
import { createLogger } from '../../core/logger.js';
import { startEdgeService, startSubgraphService } from '../../platform/platform.js';
import { UNAVAILABLE_MESSAGE } from '../../edge/federation/signing-data-source.js';
import { createPlatformPubSub, type PlatformPubSub } from '../../subgraphs/shared/pubsub.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { testConfig } from '../support/platform-harness.js';

/**
 * A subgraph that goes down while the edge runs: GraphQL answers the other subgraphs' fields with
 * SERVICE_UNAVAILABLE beside them, its REST paths answer 503 and the others' 200; once it is back
 * on its address, requests succeed again without restarting the edge.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let pubsub: PlatformPubSub;
const stops: (() => Promise<unknown>)[] = [];
let marketplace: { close(): Promise<void> } | undefined;
let baseUrl: string;
let key: string;
const logger = createLogger('silent', 'platform');
let config: ReturnType<typeof testConfig>;

const startMarketplace = async () => (marketplace = await startSubgraphService('marketplace', config, db.url, new LocalKeyStore(identityOrm), logger, pubsub));

beforeAll(async () => {
  db = await createTestDatabase();
  config = testConfig({ subgraphPorts: { membership: 0, marketplace: await freePort(), inference: 0, traceroute: 0 } });
  identityOrm = await openIdentityStore(db.url);
  pubsub = createPlatformPubSub();
  const urls = {} as Record<SubgraphName, string>;
  for (const name of SUBGRAPH_NAMES) {
    const service = name === 'marketplace' ? await startMarketplace() : await startSubgraphService(name, config, db.url, new LocalKeyStore(identityOrm), logger, pubsub);
    if (name !== 'marketplace') stops.push(service.close);
    urls[name] = service.url;
  }
  const edge = await startEdgeService(config, identityOrm, urls, logger);
  stops.unshift(edge.stop);
  baseUrl = edge.url.replace(/\/graphql$/, '');
  key = (await new IdentityService(identityOrm.em.fork()).createKey({ account: 'down-co', kind: 'live' })).secret;
}, 120_000);

afterAll(async () => {
  for (const stop of stops) await stop();
  await marketplace?.close();
  await pubsub?.close();
  await identityOrm?.close(true);
  await db?.drop();
});

const headers = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const graphql = async (query: string) => {
  const response = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers: headers(), body: JSON.stringify({ query }) });
  return { status: response.status, body: (await response.json()) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown>; path?: unknown[] }[] } };
};
const rest = (path: string) => fetch(`${baseUrl}/api/v1${path}`, { headers: headers() });
// jobPosting is nullable, so its null can sit beside members' data; a non-null root field of the
// subgraph (jobPostings) would null the whole answer, as GraphQL's null propagation says.
const BOTH = '{ members(limit: 1) { data { id } } jobPosting(id: "00000000-0000-7000-8000-000000000000") { id } }';

describe('a subgraph that goes down and comes back', () => {
  it('serves both subgraphs while both are up', async () => {
    const { body } = await graphql(BOTH);
    expect(body.errors).toBeUndefined();
    expect((await rest('/jobs')).status).toBe(200);
  });

  it('answers the others’ data with SERVICE_UNAVAILABLE for its fields, and 503 on its REST paths', async () => {
    await marketplace!.close();
    marketplace = undefined;
    const { status, body } = await graphql(BOTH);
    expect(status).toBe(200);
    expect(body.data?.members).toEqual({ data: expect.any(Array) });
    expect(body.data).toHaveProperty('jobPosting', null);
    expect(body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    expect(body.errors?.[0]?.message).toBe(UNAVAILABLE_MESSAGE);
    // Nothing of the subgraph's address or the socket error reaches the client.
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|fetch failed/);

    const jobs = await rest('/jobs');
    expect(jobs.status).toBe(503);
    expect(((await jobs.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
    expect((await rest('/members')).status).toBe(200);
  });

  it('serves it again once it is back, with the same edge', async () => {
    await startMarketplace();
    const { body } = await graphql(BOTH);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({ members: { data: expect.any(Array) }, jobPosting: null });
    expect((await rest('/jobs')).status).toBe(200);
  });
});
