import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/config.js';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { createTestDatabase } from '../support/database.js';
import { freePort } from '../support/free-port.js';
import { spawnService, TSX, type ServiceProcess } from '../support/service-process.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';

/** Runs a service's own entry (`npx tsx <entry>`), as a deployment on its own machine would. */
function run(entry: string, env: NodeJS.ProcessEnv): ServiceProcess {
  return spawnService(TSX, [entry], env);
}

async function waitUntilUp(service: ServiceProcess, what: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void service.exited.then((code) => (exitCode = code));
  while (!service.output().includes(' is up at ')) {
    if (exitCode !== undefined) throw new Error(`${what} exited with ${exitCode}:\n${service.output()}`);
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}:\n${service.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(service: ServiceProcess | undefined): Promise<void> {
  if (!service || service.child.exitCode !== null) return;
  service.child.kill('SIGTERM');
  await service.exited;
}

/** Whether something accepts TCP connections at host:port. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('subgraph addresses from the environment', () => {
  it('binds subgraphs on loopback and points the edge there by default', () => {
    const config = loadConfig({ DATA_DIR: '/tmp/unused', INTERNAL_SECRET: TEST_SECRET, MEMBERSHIP_PORT: '5101' });
    expect(config.subgraphHost).toBe('127.0.0.1');
    expect(config.subgraphUrls.membership).toBe('http://127.0.0.1:5101/graphql');
    expect(config.subgraphUrls.traceroute).toBe('http://127.0.0.1:4104/graphql');
  });

  it('takes SUBGRAPH_HOST for the bind and <NAME>_URL for where the edge finds each subgraph', () => {
    const config = loadConfig({
      DATA_DIR: '/tmp/unused',
      INTERNAL_SECRET: TEST_SECRET,
      SUBGRAPH_HOST: '0.0.0.0',
      MEMBERSHIP_URL: 'http://members.internal:4101/graphql',
    });
    expect(config.subgraphHost).toBe('0.0.0.0');
    expect(config.subgraphUrls.membership).toBe('http://members.internal:4101/graphql');
    // A wildcard bind is reached on loopback by a gateway on the same machine.
    expect(config.subgraphUrls.inference).toBe('http://127.0.0.1:4103/graphql');
    expect(loadConfig({ DATA_DIR: '/tmp/unused', INTERNAL_SECRET: TEST_SECRET, SUBGRAPH_HOST: '::' }).subgraphUrls.marketplace).toBe(
      'http://[::1]:4102/graphql',
    );
  });

  it('refuses a <NAME>_URL that is not an http URL, naming the variable', () => {
    expect(() => loadConfig({ DATA_DIR: '/tmp/unused', INTERNAL_SECRET: TEST_SECRET, TRACEROUTE_URL: 'traceroute:4104' })).toThrow(/TRACEROUTE_URL/);
  });
});

describe('a subgraph on its own address, the edge apart pointed at it by URL', () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> };
  let identityOrm: MikroORM | undefined;
  let subgraph: ServiceProcess | undefined;
  let gateway: ServiceProcess | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'services-apart-'));
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await stop(gateway);
    await stop(subgraph);
    await identityOrm?.close(true);
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves members through the edge from a membership subgraph that listens only on SUBGRAPH_HOST', async () => {
    // 127.0.0.2 stands for another machine: a loopback address other than the default one.
    const subgraphHost = '127.0.0.2';
    const membershipPort = await freePort();
    const edgePort = await freePort();
    const { DATABASE_URL: _ignored, ...inherited } = process.env;
    const shared = {
      ...inherited,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      INTERNAL_SECRET: TEST_SECRET,
    };

    subgraph = run('platform/entries/membership.ts', { ...shared, SUBGRAPH_HOST: subgraphHost, MEMBERSHIP_PORT: String(membershipPort) });
    await waitUntilUp(subgraph, 'the membership subgraph');
    expect(subgraph.output()).toContain(`http://${subgraphHost}:${membershipPort}/graphql`);
    expect(await accepts(subgraphHost, membershipPort)).toBe(true);
    expect(await accepts('127.0.0.1', membershipPort)).toBe(false);
    // Reachable from elsewhere now, it still answers only requests the edge signed.
    const direct = await fetch(`http://${subgraphHost}:${membershipPort}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ members { data { name } } }' }),
    });
    const refused = (await direct.json()) as { data?: unknown; errors: { extensions: { code: string } }[] };
    expect(refused.data ?? null).toBeNull();
    expect(refused.errors[0].extensions.code).toBe('UNAUTHENTICATED');

    // The edge runs with the default SUBGRAPH_HOST: only MEMBERSHIP_URL tells it where to go.
    gateway = run('platform/entries/gateway.ts', {
      ...shared,
      PORT: String(edgePort),
      HOST: '127.0.0.1',
      MEMBERSHIP_URL: `http://${subgraphHost}:${membershipPort}/graphql`,
    });
    await waitUntilUp(gateway, 'the gateway');

    identityOrm = await openIdentityStore(database.url);
    const { secret } = await new IdentityService(identityOrm.em.fork()).createKey({ account: 'apart', kind: 'live' });
    const auth = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
    const created = await fetch(`http://127.0.0.1:${edgePort}/api/v1/members`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Far Away', email: 'far@example.org' }),
    });
    expect(created.status, await created.clone().text()).toBe(201);

    const graphql = await fetch(`http://127.0.0.1:${edgePort}/graphql`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ query: '{ members { data { name email } } }' }),
    });
    expect(await graphql.json()).toEqual({ data: { members: { data: [{ name: 'Far Away', email: 'far@example.org' }] } } });

    // The edge's health check asks each subgraph at its URL: membership answers at 127.0.0.2,
    // the three not started here do not.
    const health = (await (await fetch(`http://127.0.0.1:${edgePort}/health`)).json()) as { checks: Record<string, string> };
    expect(health.checks.membership).toBe('ok');
    expect(health.checks.traceroute).not.toBe('ok');
  }, 120_000);
});
