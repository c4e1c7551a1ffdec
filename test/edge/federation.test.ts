import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdge, listenEdge } from '../../edge/index.js';
import { loadConfig } from '../../platform/config.js';
import { createLogger } from '../../core/logger.js';
import { openIdentityStore } from '../../identity/index.js';
import { LocalKeyStore } from '../../identity/local-key-store.js';
import { IdentityService } from '../../identity/identity.service.js';
import { testConfig } from '../support/platform-harness.js';
import { TRACE_EXPORT_LIMITS } from '../../platform/config.js';
import { readSupergraph } from '../../schema/supergraph.js';
import { createInferenceSubgraph } from '../../subgraphs/inference/index.js';
import { createMarketplaceSubgraph } from '../../subgraphs/marketplace/index.js';
import { createMembershipSubgraph } from '../../subgraphs/membership/index.js';
import type { RunningService } from '../../core/listen.js';
import { serveSubgraph } from '../../subgraphs/shared/server.js';
import type { Subgraph } from '../../subgraphs/shared/subgraph.js';
import { createTracerouteSubgraph } from '../../subgraphs/traceroute/index.js';
import { createTestDatabase } from '../support/database.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';

const logger = createLogger('silent');
const defaults = loadConfig({ NODE_ENV: 'test', INTERNAL_SECRET: TEST_SECRET, DATA_DIR: '/tmp/platform-test-unused' });
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
const subgraphs: Subgraph[] = [];
const services: RunningService[] = [];
let gateway: RunningService;
let liveKey: string;
let otherKey: string;
/** Every SQL statement the membership subgraph runs. */
const membershipSql: string[] = [];

async function graphql(key: string, query: string, variables?: Record<string, unknown>) {
  const response = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, body: (await response.json()) as { data?: any; errors?: any[] } };
}

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  const options = { databaseUrl: db.url, internalSecret: TEST_SECRET, logger };
  subgraphs.push(
    await createMembershipSubgraph({ ...options, keyStore: new LocalKeyStore(identityOrm), onQuery: (sql) => membershipSql.push(sql) }),
    await createMarketplaceSubgraph(options),
    await createInferenceSubgraph(options),
    await createTracerouteSubgraph({ ...options, keyStore: new LocalKeyStore(identityOrm) }),
  );
  for (const subgraph of subgraphs) services.push(await serveSubgraph(subgraph, { port: 0, logger }));
  const edge = await createEdge({
    supergraphSdl: readSupergraph(),
    subgraphUrls: Object.fromEntries(services.map((s) => [s.name, s.url])),
    internalSecret: TEST_SECRET,
    documents: testConfig().documents,
    tracerouteExport: TRACE_EXPORT_LIMITS,
    identityOrm,
    logger,
    introspection: false,
    restBases: defaults.restBases,
    rateLimits: defaults.rateLimits,
    subscriptionLimits: defaults.subscriptions,
  });
  gateway = await listenEdge(edge, 0, '127.0.0.1');
  const identity = new IdentityService(identityOrm.em.fork());
  liveKey = (await identity.createKey({ account: 'fed', kind: 'live' })).secret;
  otherKey = (await identity.createKey({ account: 'fed-other', kind: 'live' })).secret;
});

afterAll(async () => {
  await gateway?.stop();
  for (const service of services) await service.stop();
  for (const subgraph of subgraphs) await subgraph.close();
  await identityOrm?.close(true);
  await db?.drop();
});

describe('the gateway over the four subgraphs', () => {
  it('never hands a client the query plan, whatever header it sends', async () => {
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${liveKey}`, 'apollo-query-plan-experimental': '1', 'apollo-query-plan-experimental-format': 'internal' },
      body: JSON.stringify({ query: '{ members(limit: 1) { data { id jobPostings { id } } } }' }),
    });
    const body = (await response.json()) as { data?: unknown; extensions?: Record<string, unknown> };
    expect(response.status).toBe(200);
    expect(body.data).toBeDefined();
    expect(body.extensions?.__queryPlanExperimental).toBeUndefined();
    expect(JSON.stringify(body)).not.toContain('serviceName');
  });

  it('resolves a page of job postings with their posters in one SQL statement on members', async () => {
    const members: string[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await graphql(liveKey, 'mutation($n: String!, $e: String!) { createMember(name: $n, email: $e) { id } }', {
        n: `Poster ${i}`,
        e: `poster${i}@example.org`,
      });
      members.push(created.body.data.createMember.id);
    }
    for (let i = 0; i < 12; i++) {
      await graphql(liveKey, 'mutation($p: ID!) { createJobPosting(title: "Job", description: "Work", postedBy: $p) { id } }', {
        p: members[i % members.length],
      });
    }
    membershipSql.length = 0;
    const result = await graphql(liveKey, '{ jobPostings(limit: 12) { data { title postedBy { id name } } } }');
    expect(result.body.errors).toBeUndefined();
    const postings = result.body.data.jobPostings.data as { postedBy: { id: string; name: string } }[];
    expect(postings).toHaveLength(12);
    for (const posting of postings) {
      expect(posting.postedBy.name).toBe(`Poster ${members.indexOf(posting.postedBy.id)}`);
    }
    const memberSelects = membershipSql.filter((sql) => /from "membership"\."member"/.test(sql));
    expect(memberSelects).toHaveLength(1);
  });

  it("does not resolve another account's member through a reference", async () => {
    const created = await graphql(otherKey, 'mutation { createMember(name: "Other", email: "other@example.org") { id } }');
    const posting = await graphql(liveKey, 'mutation($p: ID!) { createJobPosting(title: "Spy", description: "x", postedBy: $p) { postedBy { id name } } }', {
      p: created.body.data.createMember.id,
    });
    expect(posting.body.data.createJobPosting.postedBy).toBeNull();
  });

  it('answers 401 UNAUTHENTICATED without a key or with an unknown one', async () => {
    const missing = await fetch(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ providers { id } }' }),
    });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as any).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const unknown = await graphql('sk_live_nope', '{ providers { id } }');
    expect(unknown.status).toBe(401);
    expect(unknown.body.errors![0].extensions.reason).toBe('invalid_api_key');
  });

  it('forwards subgraph errors with their codes', async () => {
    const result = await graphql(liveKey, 'mutation { renewMember(id: "00000000-0000-4000-8000-00000000dead") { id } }');
    expect(result.body.errors![0].extensions.code).toBe('NOT_FOUND');
    const invalid = await graphql(liveKey, 'mutation { createMember(name: "", email: "x@example.org") { id } }');
    expect(invalid.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
    expect(invalid.body.errors![0].extensions.param).toBe('name');
  });

  it('refuses every subgraph request that does not carry a valid signed principal', async () => {
    for (const service of services) {
      const response = await fetch(service.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-platform-principal': 'forged.signature' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(response.status, service.name).toBe(401);
    }
  });

  it('keeps introspection off when configured so', async () => {
    const result = await graphql(liveKey, '{ __schema { types { name } } }');
    expect(result.body.errors?.[0].message).toMatch(/introspection/i);
  });

  it('answers /health with every subgraph and the database', async () => {
    const response = await fetch(gateway.url.replace('/graphql', '/health'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ok',
      checks: { database: 'ok', membership: 'ok', marketplace: 'ok', inference: 'ok', traceroute: 'ok' },
    });
  });
});

describe('health when a subgraph is down', () => {
  it('answers 503 naming the subgraph that does not answer', async () => {
    const traceroute = services.find((s) => s.name === 'traceroute')!;
    await traceroute.stop();
    services.splice(services.indexOf(traceroute), 1);
    const response = await fetch(gateway.url.replace('/graphql', '/health'));
    expect(response.status).toBe(503);
    const body = (await response.json()) as { checks: Record<string, string> };
    expect(body.checks.membership).toBe('ok');
    expect(body.checks.traceroute).not.toBe('ok');
  });
});
