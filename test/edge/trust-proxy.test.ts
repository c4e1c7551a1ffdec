import https from 'node:https';
import WebSocket from 'ws';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountUserService } from '../../identity/account-user.service.js';
import { openIdentityStore } from '../../identity/index.js';
import type { RunningService } from '../../core/listen.js';
import { loadConfig, SUBGRAPH_NAMES, type SubgraphName } from '../../platform/config.js';
import { startEdgeService } from '../../platform/platform.js';
import { capturedLogger } from '../support/captured-logger.js';
import { createTestDatabase } from '../support/database.js';
import { nginxMissing, startNginxProxy, type NginxProxy } from '../support/nginx-proxy.js';
import { testConfig } from '../support/platform-harness.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';

/**
 * The edge behind a real TLS-terminating proxy (nginx on loopback). Clients connect to nginx from
 * addresses of their own (127.0.0.2, 127.0.0.3, ...), and nginx connects to the edge from
 * 127.0.0.1. With TRUST_PROXY naming the proxy, each client counts in its own per-address window,
 * its address is the one logged, and its session cookie is Secure (it came over https); what a
 * client writes in X-Forwarded-For itself is never believed. Without TRUST_PROXY every client
 * behind the proxy is the proxy.
 */
const skip = nginxMissing();
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let proxy: NginxProxy;
const edges: RunningService[] = [];
const logs: { logger: Logger; lines: Record<string, unknown>[] }[] = [];
/** nginx's TLS port in front of: the edge trusting 127.0.0.1/32, the one trusting one hop, and the one trusting nobody. */
let ports: { range: number; hops: number; none: number };

const PASSWORD = 'correct horse battery staple';
const ANONYMOUS_PER_MINUTE = 50;
const SIGN_IN_PER_ADDRESS = 2;
const nowhere = Object.fromEntries(SUBGRAPH_NAMES.map((name) => [name, 'http://127.0.0.1:1/graphql'])) as Record<SubgraphName, string>;

beforeAll(async () => {
  if (skip) return;
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  const em = identityOrm.em.fork();
  await new AccountUserService(em).createOwner({ account: 'proxied', email: 'owner@example.org', password: PASSWORD });
  for (const trust of ['127.0.0.1/32', '1', '']) {
    const log = capturedLogger();
    logs.push(log);
    // The setting as an operator writes it, read by the platform's configuration.
    const { trustProxy } = loadConfig({ NODE_ENV: 'test', DATA_DIR: '/tmp/platform-test-unused', INTERNAL_SECRET: TEST_SECRET, TRUST_PROXY: trust });
    const config = testConfig({
      trustProxy,
      rateLimits: { ...testConfig().rateLimits, anonymousPerMinute: ANONYMOUS_PER_MINUTE },
      dashboard: { ...testConfig().dashboard, signInPerAddress: SIGN_IN_PER_ADDRESS },
    });
    edges.push(await startEdgeService(config, identityOrm, nowhere, log.logger));
  }
  proxy = await startNginxProxy(edges.map((edge) => edge.port));
  ports = { range: proxy.ports[0], hops: proxy.ports[1], none: proxy.ports[2] };
}, 60_000);

afterAll(async () => {
  await proxy?.stop();
  for (const edge of edges) await edge.stop();
  await identityOrm?.close(true);
  await db?.drop();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over https through nginx, from the loopback address `from`, on a connection of its own. */
function viaProxy(port: number, from: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      { host: '127.0.0.1', port, localAddress: from, method, path, headers: { 'content-type': 'application/json', ...headers }, rejectUnauthorized: false, agent: false },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** A request without a key: refused 401, counted in its client address's window. */
const anonymous = (port: number, from: string, spoofed?: string) =>
  viaProxy(port, from, 'POST', '/graphql', spoofed ? { 'x-forwarded-for': spoofed } : {}, JSON.stringify({ query: '{ __typename }' }));
const remaining = (answer: Answer) => Number(answer.headers['x-ratelimit-remaining']);

const signIn = (port: number, from: string, email: string, password: string, spoofed?: string) =>
  viaProxy(port, from, 'POST', '/dashboard/api/session', spoofed ? { 'x-forwarded-for': spoofed } : {}, JSON.stringify({ email, password }));

/** A graphql-ws socket through nginx from `from` that sends no key: resolves with its close code. */
function keylessSocket(port: number, from: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`wss://127.0.0.1:${port}/graphql`, 'graphql-transport-ws', { localAddress: from, rejectUnauthorized: false });
    socket.once('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} })));
    socket.once('close', (code) => resolve(code));
    socket.once('error', reject);
  });
}

describe.skipIf(skip)('TRUST_PROXY behind nginx terminating TLS', () => {
  it('the session cookie is Secure when the trusted proxy says the client came over https, and not otherwise', async () => {
    const trusted = await signIn(ports.hops, '127.0.0.12', 'owner@example.org', PASSWORD);
    expect(trusted.status).toBe(200);
    const trustedCookie = String(trusted.headers['set-cookie']);
    expect(trustedCookie).toMatch(/HttpOnly/i);
    expect(trustedCookie).toMatch(/;\s*Secure/i);
    // A proxy's word is not believed: the edge saw plain http. (First in this file: the sign-in
    // tests below spend the untrusting edge's attempts for everyone behind its proxy.)
    const untrusted = await signIn(ports.none, '127.0.0.13', 'owner@example.org', PASSWORD);
    expect(untrusted.status).toBe(200);
    expect(String(untrusted.headers['set-cookie'])).not.toMatch(/;\s*Secure/i);
  });

  it.each([
    ['addresses (127.0.0.1/32)', 'range', '127.0.0.2', '127.0.0.3'],
    ['a hop count (1)', 'hops', '127.0.0.4', '127.0.0.5'],
  ] as const)('trusting the proxy by %s, each client has its own per-address window; an X-Forwarded-For it sends is not believed', async (_label, which, first, second) => {
    const port = ports[which];
    const a1 = await anonymous(port, first);
    expect(a1.status).toBe(401);
    expect(remaining(a1)).toBe(ANONYMOUS_PER_MINUTE - 1);
    // Another client, its own window.
    expect(remaining(await anonymous(port, second))).toBe(ANONYMOUS_PER_MINUTE - 1);
    // The first again, claiming to be someone else each time: still its window.
    expect(remaining(await anonymous(port, first, '203.0.113.7'))).toBe(ANONYMOUS_PER_MINUTE - 2);
    expect(remaining(await anonymous(port, first, '198.51.100.1, 203.0.113.8'))).toBe(ANONYMOUS_PER_MINUTE - 3);
    // The request lines name the client, not the proxy.
    const log = logs[which === 'range' ? 0 : 1];
    const addresses = log.lines.filter((line) => (line.req as { url?: string } | undefined)?.url === '/graphql').map((line) => (line.req as { remoteAddress?: string }).remoteAddress);
    expect(addresses).toEqual([first, second, first, first]);
  });

  it("a websocket's failed authentication counts in its client's window, as its HTTP requests do", async () => {
    expect(await keylessSocket(ports.range, '127.0.0.14')).toBe(4401);
    expect(remaining(await anonymous(ports.range, '127.0.0.14'))).toBe(ANONYMOUS_PER_MINUTE - 2);
    expect(remaining(await anonymous(ports.range, '127.0.0.15'))).toBe(ANONYMOUS_PER_MINUTE - 1);
  });

  it('without TRUST_PROXY, every client behind the proxy counts as the proxy, and X-Forwarded-For is not believed', async () => {
    const first = await anonymous(ports.none, '127.0.0.6');
    const second = await anonymous(ports.none, '127.0.0.7', '203.0.113.9');
    expect(remaining(second)).toBe(remaining(first) - 1);
    const addresses = logs[2].lines.filter((line) => (line.req as { url?: string } | undefined)?.url === '/graphql').map((line) => (line.req as { remoteAddress?: string }).remoteAddress);
    expect(addresses).toEqual(['127.0.0.1', '127.0.0.1']);
  });

  it('sign-in attempts count per client address behind a trusted proxy, whatever X-Forwarded-For says', async () => {
    for (let i = 0; i < SIGN_IN_PER_ADDRESS; i++) {
      expect((await signIn(ports.range, '127.0.0.8', `nobody${i}@example.org`, 'wrong password', `203.0.113.${i}`)).status).toBe(401);
    }
    expect((await signIn(ports.range, '127.0.0.8', 'nobody9@example.org', 'wrong password', '203.0.113.99')).status).toBe(429);
    // Another client is not held back by the first one's attempts.
    expect((await signIn(ports.range, '127.0.0.9', 'nobody9@example.org', 'wrong password')).status).toBe(401);
  });

  it('without TRUST_PROXY, one client spends the sign-in attempts of everyone behind the proxy', async () => {
    // The attempts left to the proxy's address (the cookie test above spent one of them) go to one client.
    const statuses: number[] = [];
    for (let i = 0; i <= SIGN_IN_PER_ADDRESS && statuses.at(-1) !== 429; i++) {
      statuses.push((await signIn(ports.none, '127.0.0.10', `someone${i}@example.org`, 'wrong password')).status);
    }
    expect(statuses.at(-1)).toBe(429);
    expect((await signIn(ports.none, '127.0.0.11', 'someone9@example.org', 'wrong password')).status).toBe(429);
  });

});

describe('TRUST_PROXY', () => {
  const read = (value: string) => loadConfig({ NODE_ENV: 'test', DATA_DIR: '/tmp/platform-test-unused', INTERNAL_SECRET: TEST_SECRET, TRUST_PROXY: value }).trustProxy;

  it('reads booleans, hop counts, addresses, ranges and names; unset trusts nobody', () => {
    expect(read('')).toBe(false);
    expect(read('false')).toBe(false);
    expect(read('true')).toBe(true);
    expect(read('2')).toBe(2);
    expect(read('loopback, 10.0.0.0/8, fd00::/8, 192.168.1.0/255.255.255.0, 172.16.0.4')).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8', '192.168.1.0/255.255.255.0', '172.16.0.4']);
  });

  it.each(['yes', '10.0.0.0/33', 'proxy.example.org', '10.0.0.1/8/8'])('refuses "%s", naming the setting', (value) => {
    expect(() => read(value)).toThrow(/TRUST_PROXY/);
  });
});
