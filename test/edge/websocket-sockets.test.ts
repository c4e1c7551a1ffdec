import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createEdge, listenEdge, type Edge } from '../../edge/index.js';
import { openIdentityStore } from '../../identity/index.js';
import { IdentityService } from '../../identity/identity.service.js';
import { createLogger } from '../../core/logger.js';
import { TRACE_EXPORT_LIMITS } from '../../platform/config.js';
import { readSupergraph } from '../../schema/supergraph.js';
import type { RunningService } from '../../core/listen.js';
import { createTestDatabase } from '../support/database.js';
import { testConfig } from '../support/platform-harness.js';

// The edge keeps one entry per authenticated socket (its principal, its upstream clients, its key
// for the re-checks). A client that hangs up while its key is being read must not leave one behind.

const AUTH_DELAY_MS = 150;
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let edge: Edge;
let running: RunningService;
let secret: string;

/** The key store, with every key lookup held back a while: the client has hung up before it answers. */
function slowKeyStore(orm: MikroORM): MikroORM {
  const slowFork = () => {
    const em = orm.em.fork();
    return new Proxy(em, {
      get: (target, property, receiver) =>
        property === 'findOne'
          ? async (...args: unknown[]) => {
              await new Promise((resolve) => setTimeout(resolve, AUTH_DELAY_MS));
              return (target.findOne as (...a: unknown[]) => unknown).apply(target, args);
            }
          : Reflect.get(target, property, receiver),
    });
  };
  const em = new Proxy(orm.em, { get: (target, property, receiver) => (property === 'fork' ? slowFork : Reflect.get(target, property, receiver)) });
  return new Proxy(orm, { get: (target, property, receiver) => (property === 'em' ? em : Reflect.get(target, property, receiver)) });
}

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  secret = (await new IdentityService(identityOrm.em.fork()).createKey({ account: 'ws-sockets', kind: 'text' })).secret;
  const config = testConfig();
  edge = await createEdge({
    supergraphSdl: readSupergraph(),
    // No operation is run: the sockets only authenticate, and no subgraph is reached.
    subgraphUrls: config.subgraphUrls,
    internalSecret: config.internalSecret,
    documents: config.documents,
    tracerouteExport: TRACE_EXPORT_LIMITS,
    identityOrm: slowKeyStore(identityOrm),
    logger: createLogger('silent', 'platform'),
    introspection: false,
    restBases: config.restBases,
    rateLimits: config.rateLimits,
    subscriptionLimits: config.subscriptions,
  });
  running = await listenEdge(edge, 0, '127.0.0.1');
});

afterAll(async () => {
  await running?.stop();
  await identityOrm?.close(true);
  await db?.drop();
});

function open(): Promise<WebSocket> {
  const socket = new WebSocket(running.url.replace(/^http/, 'ws'), 'graphql-transport-ws');
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

function init(socket: WebSocket): void {
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${secret}` } }));
}

function closed(socket: WebSocket): Promise<void> {
  return new Promise((resolve) => (socket.readyState === WebSocket.CLOSED ? resolve() : socket.once('close', () => resolve())));
}

async function until(predicate: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the sockets the edge tracks', () => {
  it('count an authenticated socket while it is open, and none once it closes', async () => {
    const socket = await open();
    const acknowledged = new Promise((resolve) => socket.once('message', resolve));
    init(socket);
    expect(JSON.parse(String(await acknowledged))).toEqual({ type: 'connection_ack' });
    expect(edge.openSockets()).toBe(1);
    socket.close();
    await closed(socket);
    await until(() => edge.openSockets() === 0);
  });

  it('keep nothing of a socket that closed while its key was being read', async () => {
    const sockets = await Promise.all([open(), open(), open()]);
    for (const socket of sockets) {
      init(socket);
      socket.close();
    }
    await Promise.all(sockets.map(closed));
    // Every authentication has answered by now; none may have registered its dead socket.
    await new Promise((resolve) => setTimeout(resolve, AUTH_DELAY_MS * 3));
    expect(edge.openSockets()).toBe(0);
  });
});
