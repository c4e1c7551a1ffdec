import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { ensureDatabaseExists } from '../../platform/database.js';
import { createNetworkLab, namespacesMissing, waitForListener, type NetworkLab } from '../support/network-lab.js';
import { redisServerMissing } from '../support/redis-server.js';
import type { ServiceProcess } from '../support/service-process.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';
import { openedWithProbes, receivedBeforeMarker, until } from '../support/subscription-probe.js';

/**
 * The platform over several hosts, each a network namespace with its own address: PostgreSQL on
 * one, Redis on one, the subgraphs on two (membership on both), and two edges; this test process
 * is the client host.
 * What holds on one machine must hold across them: limits counted once over both edges, events
 * crossing edges, and a host lost costing only what it was doing.
 */
const missing = namespacesMissing() ?? redisServerMissing();
const PREFIX = `mh${process.pid % 100_000}`;
// A /24 of its own per run, away from the scamper lab's 10.33.
const SUBNET = 100 + (process.pid % 100);
// members: membership and marketplace; others: inference, traceroute and a second membership.
const HOSTS = ['db', 'redis', 'members', 'others', 'edge1', 'edge2'] as const;
const EDGE_PORT = 4000;
const PORTS = { membership: 4101, marketplace: 4102, inference: 4103, traceroute: 4104 } as const;
// Few enough that the limit is reached quickly; the writes use a live key with the default.
const TEST_KEY_PER_MINUTE = 10;

describe.skipIf(missing)(`the platform over several hosts${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let lab: NetworkLab;
  let dataDir: string;
  let identityOrm: MikroORM | undefined;
  let env: NodeJS.ProcessEnv;
  const processes: ServiceProcess[] = [];
  const edgeBase = (host: 'edge1' | 'edge2') => `http://${lab.address(host)}:${EDGE_PORT}`;

  /** Runs a service's entry on a host, as its own machine would: `node --import tsx <entry>`. */
  const startService = async (host: string, entry: string, port: number, extra: NodeJS.ProcessEnv = {}) => {
    const service = lab.spawn(host, process.execPath, ['--import', 'tsx', `platform/entries/${entry}.ts`], { ...env, ...extra });
    processes.push(service);
    await waitForListener(lab.address(host), port, `${entry} on ${host}`, service);
    return service;
  };

  // Edge 2 has a membership instance of its own on the other subgraph host: chat events cross
  // from one instance to the other through Redis, as with several replicas of the subgraph.
  const startEdge = (host: 'edge1' | 'edge2') =>
    startService(host, 'gateway', EDGE_PORT, {
      HOST: lab.address(host),
      PORT: String(EDGE_PORT),
      ...(host === 'edge2' ? { MEMBERSHIP_URL: `http://${lab.address('others')}:${PORTS.membership}/graphql` } : {}),
    });

  beforeAll(async () => {
    lab = await createNetworkLab(PREFIX, SUBNET, HOSTS);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'many-hosts-'));
    // PostgreSQL runs as its own user and must pass through to its directory below.
    await chmod(dataDir, 0o711);
    const postgres = await lab.startPostgres('db', path.join(dataDir, 'postgres'));
    processes.push(postgres.process);
    const databaseUrl = await ensureDatabaseExists(postgres.url, 'platform');

    const redis = lab.spawn('redis', 'redis-server', ['--bind', lab.address('redis'), '--port', '6379', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], process.env);
    processes.push(redis);
    await waitForListener(lab.address('redis'), 6379, 'redis-server', redis);

    const { DATABASE_URL: _unused, ...inherited } = process.env;
    const subgraphHost = (name: keyof typeof PORTS) => (name === 'membership' || name === 'marketplace' ? 'members' : 'others');
    env = {
      ...inherited,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      REDIS_URL: `redis://${lab.address('redis')}:6379`,
      INTERNAL_SECRET: TEST_SECRET,
      EDGE_WORKERS: '1',
      // The key store the subgraphs ask is edge 1's; edge 2 is the one taken down below.
      EDGE_INTERNAL_URL: `http://${lab.address('edge1')}:${EDGE_PORT}`,
      RATE_LIMIT_TEST_PER_MINUTE: String(TEST_KEY_PER_MINUTE),
      // The writers below go as fast as the edges answer; their key's limit is not under test.
      RATE_LIMIT_LIVE_PER_MINUTE: '1000000',
      ...Object.fromEntries(
        Object.entries(PORTS).flatMap(([name, port]) => [
          [`${name.toUpperCase()}_PORT`, String(port)],
          [`${name.toUpperCase()}_URL`, `http://${lab.address(subgraphHost(name as keyof typeof PORTS))}:${port}/graphql`],
        ]),
      ),
    };

    // The subgraphs first (each migrates its own schema), then the edges over them.
    await Promise.all(
      (Object.keys(PORTS) as (keyof typeof PORTS)[]).map((name) =>
        startService(subgraphHost(name), name, PORTS[name], { SUBGRAPH_HOST: lab.address(subgraphHost(name)) }),
      ),
    );
    await startService('others', 'membership', PORTS.membership, { SUBGRAPH_HOST: lab.address('others') });
    await startEdge('edge1');
    await startEdge('edge2');
    identityOrm = await openIdentityStore(databaseUrl);
  }, 240_000);

  afterAll(async () => {
    await identityOrm?.close(true);
    await lab?.destroy();
    for (const service of processes) if (service.child.exitCode === null) service.child.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const issueKey = async (account: string, kind: 'live' | 'test' | 'admin') =>
    (await new IdentityService(identityOrm!.em.fork()).createKey({ account, kind })).secret;

  const graphql = async (host: 'edge1' | 'edge2', key: string, query: string, variables: Record<string, unknown> = {}) => {
    const response = await fetch(`${edgeBase(host)}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: any; errors?: unknown[] };
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    return body.data;
  };

  it('answers through both edges from the subgraphs on both hosts', async () => {
    const live = await issueKey('every-host', 'live');
    const admin = await issueKey('every-host-ops', 'admin');
    await graphql('edge1', live, 'mutation { createMember(name: "Eve", email: "eve@example.org") { id } }');
    for (const host of ['edge1', 'edge2'] as const) {
      // Members and their job postings: membership (on either host) and marketplace.
      const members = await graphql(host, live, '{ members(limit: 1) { data { name jobPostings { id } } } }');
      expect(members.members.data).toEqual([{ name: 'Eve', jobPostings: [] }]);
      // Providers and traces: inference and traceroute, on the other.
      const others = await graphql(host, admin, '{ providers { id } traces(limit: 1) { data { traceId } } }');
      expect(others.providers.length).toBeGreaterThan(0);
      expect(others.traces.data).toEqual([]);
    }
  });

  it('counts a key\'s requests once over both edges (the limit is shared through Redis)', async () => {
    const key = await issueKey('limits-across-hosts', 'test');
    const statuses: number[] = [];
    // Twice the limit, alternating edges: each edge alone would admit all of its share.
    for (let i = 0; i < TEST_KEY_PER_MINUTE * 2; i++) {
      const response = await fetch(`${edgeBase(i % 2 ? 'edge2' : 'edge1')}/api/v1/nothing-here`, { headers: { authorization: `Bearer ${key}` } });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    expect(statuses.filter((s) => s !== 429)).toHaveLength(TEST_KEY_PER_MINUTE);
    expect(statuses.slice(TEST_KEY_PER_MINUTE)).toEqual(Array(TEST_KEY_PER_MINUTE).fill(429));
  });

  it('delivers a chat message sent through edge 2 to a subscriber on edge 1', async () => {
    const key = await issueKey('chat-across-hosts', 'live');
    const ann = (await graphql('edge2', key, 'mutation { createMember(name: "Ann", email: "ann@example.org") { id } }')).createMember.id;
    const bob = (await graphql('edge2', key, 'mutation { createMember(name: "Bob", email: "bob@example.org") { id } }')).createMember.id;
    const channel = (
      await graphql('edge2', key, 'mutation($a: ID!, $m: [ID!]) { createChatChannel(asMember: $a, name: "x", memberIds: $m) { id } }', { a: ann, m: [bob] })
    ).createChatChannel.id;
    const client: Client = createClient({
      url: `ws://${lab.address('edge1')}:${EDGE_PORT}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${key}` },
      retryAttempts: 0,
    });
    const seen: unknown[] = [];
    const iterator = client.iterate({
      query: 'subscription($b: ID!, $c: ID!) { messageAdded(asMember: $b, channelId: $c) { text sender { name } } }',
      variables: { b: bob, c: channel },
    });
    const reading = (async () => {
      for await (const result of iterator) seen.push(result);
    })();
    const send = (text: string) =>
      graphql('edge2', key, 'mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', {
        a: ann,
        c: channel,
        t: text,
      });
    const textOf = (result: unknown) => (result as { data?: { messageAdded: { text: string } } }).data?.messageAdded.text;
    const start = await openedWithProbes(seen, send, textOf);
    await send('across hosts');
    expect(await receivedBeforeMarker(seen, send, textOf, { from: start })).toEqual([
      { data: { messageAdded: { text: 'across hosts', sender: { name: 'Ann' } } } },
    ]);
    await iterator.return?.();
    await reading;
    await client.dispose();
  });

  it('loses only edge 2\'s requests while edge 2 is down, recovers when it returns, and keeps every acknowledged write', async () => {
    const key = await issueKey('writes-across-hosts', 'live');
    type Outcome = { edge: 'edge1' | 'edge2'; phase: Phase; id?: string; status?: number; error?: string };
    type Phase = 'before' | 'down' | 'after';
    let phase: Phase = 'before';
    const outcomes: Outcome[] = [];
    let stop = false;
    let serial = 0;

    const write = async (edge: 'edge1' | 'edge2') => {
      const n = serial++;
      // The phase a request started in: one started before the cut is in flight across it.
      const startedIn = phase;
      try {
        const response = await fetch(`${edgeBase(edge)}/api/v1/members`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Writer ${n}`, email: `writer-${n}@example.org` }),
          // A client's own patience: a request in flight to a host whose link is cut hears nothing back.
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await response.json()) as { id?: string };
        outcomes.push({ edge, phase: startedIn, status: response.status, id: response.status === 201 ? body.id : undefined });
      } catch (error) {
        outcomes.push({ edge, phase: startedIn, error: String((error as Error).cause ?? error) });
        // A client's pause before it tries again: not a wait for anything, only not a busy loop
        // of refused connections while the host restarts.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    // One writer per edge, each a client that keeps writing through its own edge.
    const writers = (['edge1', 'edge2'] as const).map(async (edge) => {
      while (!stop) await write(edge);
    });
    const acked = (edge: string, p: Phase) => outcomes.filter((o) => o.edge === edge && o.phase === p && o.id).length;

    try {
      await until(() => acked('edge1', 'before') >= 10 && acked('edge2', 'before') >= 10, 'writes through both edges', 60_000);
      phase = 'down';
      await lab.takeDown('edge2');
      // Edge 1 keeps acknowledging while edge 2 is gone, and edge 2's clients see it gone.
      await until(() => acked('edge1', 'down') >= 20 && outcomes.some((o) => o.edge === 'edge2' && o.error), 'writes through edge 1 with edge 2 down', 60_000);
      await lab.bringUp('edge2');
      await startEdge('edge2');
      phase = 'after';
      await until(() => acked('edge1', 'after') >= 10 && acked('edge2', 'after') >= 10, 'writes through both edges again', 60_000);
    } finally {
      stop = true;
      await Promise.all(writers);
    }

    // Edge 1 answered everything, through the whole time; edge 2's failures are its lost link only.
    const edge1Failures = outcomes.filter((o) => o.edge === 'edge1' && o.status !== 201);
    expect(edge1Failures.slice(0, 3), JSON.stringify(edge1Failures.slice(0, 3))).toEqual([]);
    const edge2Failures = outcomes.filter((o) => o.edge === 'edge2' && o.status !== 201);
    expect(edge2Failures.every((o) => o.error !== undefined && o.phase !== 'after')).toBe(true);
    expect(edge2Failures.length).toBeGreaterThan(0);

    // Every acknowledged write is there, read back through either edge.
    const ids = outcomes.flatMap((o) => (o.id ? [o.id] : []));
    // The edge takes at most 15 aliases a document.
    for (let i = 0; i < ids.length; i += 15) {
      const batch = ids.slice(i, i + 15);
      const query = `{ ${batch.map((id, j) => `m${j}: member(id: ${JSON.stringify(id)}) { id }`).join(' ')} }`;
      const data = await graphql(i % 30 ? 'edge2' : 'edge1', key, query);
      expect(batch.map((_, j) => data[`m${j}`]?.id)).toEqual(batch);
    }
  }, 240_000);

  it('answers without the subgraphs of a host taken down, and with them once they return', async () => {
    const live = await issueKey('subgraph-host-down', 'live');
    const admin = await issueKey('subgraph-host-down-ops', 'admin');
    const providers = () => fetch(`${edgeBase('edge1')}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ providers { id } }' }),
    });
    // Edge 1 holds a kept-alive connection to inference from here on.
    expect((await (await providers()).json()) as object).toMatchObject({ data: { providers: expect.any(Array) } });

    await lab.takeDown('others');
    // The host vanished without a word (no RST, no FIN): edge 1 must find out, not wait on its
    // kept-alive connection (undici's own limit, 300 s, is past this test's timeout).
    const answer = (await (await providers()).json()) as { data?: unknown; errors?: { extensions: { code: string } }[] };
    expect(answer.errors?.[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
    // Membership on the other host is untouched: edge 1 writes on.
    const created = await fetch(`${edgeBase('edge1')}/api/v1/members`, {
      method: 'POST',
      headers: { authorization: `Bearer ${live}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Still Here', email: 'still-here@example.org' }),
    });
    expect(created.status, await created.clone().text()).toBe(201);

    await lab.bringUp('others');
    await Promise.all(
      (['inference', 'traceroute', 'membership'] as const).map((name) =>
        startService('others', name, PORTS[name], { SUBGRAPH_HOST: lab.address('others') }),
      ),
    );
    expect((await (await providers()).json()) as object).toMatchObject({ data: { providers: expect.any(Array) } });
  }, 240_000);
});
