import net from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.js';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { SUBGRAPH_NAMES, type SubgraphName } from '../../platform/config.js';
import { startEdgeService } from '../../platform/platform.js';
import { createTestDatabase } from '../support/database.js';
import { testConfig } from '../support/platform-harness.js';

/**
 * The edge stopping (SIGTERM of its process, an edge worker restarted): a request under way is
 * answered with `Connection: close` and its connection closed after it, and an idle keep-alive
 * connection is closed at once, so no client sends its next request to a process on its way out.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let key: string;

// __typename needs no subgraph.
const nowhere = Object.fromEntries(SUBGRAPH_NAMES.map((name) => [name, 'http://127.0.0.1:1/graphql'])) as Record<SubgraphName, string>;
const QUERY = JSON.stringify({ query: '{ __typename }' });
const ANSWER = '{"data":{"__typename":"Query"}}';

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  key = (await new IdentityService(identityOrm.em.fork()).createKey({ account: 'drain', kind: 'live' })).secret;
}, 60_000);

afterAll(async () => {
  await identityOrm?.close(true);
  await db?.drop();
});

/** A keep-alive connection that collects what the edge sends; `until` resolves once `text` has come. */
function connection(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  socket.setEncoding('utf8');
  let received = '';
  const waiting: { text: string; resolve: () => void }[] = [];
  socket.on('data', (chunk: string) => {
    received += chunk;
    for (const wait of waiting.filter((w) => received.includes(w.text))) {
      waiting.splice(waiting.indexOf(wait), 1);
      wait.resolve();
    }
  });
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  return {
    socket,
    closed,
    connected,
    received: () => received,
    until: (text: string) => new Promise<void>((resolve) => (received.includes(text) ? resolve() : waiting.push({ text, resolve }))),
  };
}

const head = (contentLength: number, extra = '') =>
  `POST /graphql HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n${extra}\r\n`;

describe('an edge that stops', () => {
  it('closes idle keep-alive connections, answers the request under way with Connection: close, and closes its connection', async () => {
    const edge = await startEdgeService(testConfig(), identityOrm, nowhere, createLogger('silent'));
    const idle = connection(edge.port);
    const busy = connection(edge.port);
    await Promise.all([idle.connected, busy.connected]);
    // One served request each: both are keep-alive connections the client would reuse.
    idle.socket.write(head(QUERY.length) + QUERY);
    busy.socket.write(head(QUERY.length) + QUERY);
    await Promise.all([idle.until(ANSWER), busy.until(ANSWER)]);
    expect(busy.received()).toMatch(/Connection: keep-alive/i);
    // The busy one's next request is under way: the edge has its headers (it said 100 Continue to
    // them) and waits for its body.
    busy.socket.write(head(QUERY.length, 'Expect: 100-continue\r\n'));
    await busy.until('HTTP/1.1 100 Continue');

    const stopped = edge.stop();
    await idle.closed;
    busy.socket.write(QUERY);
    await busy.closed;
    await stopped;

    const second = busy.received().slice(busy.received().indexOf('HTTP/1.1 100 Continue\r\n\r\n') + 'HTTP/1.1 100 Continue\r\n\r\n'.length);
    expect(second).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(second).toMatch(/\r\nConnection: close\r\n/i);
    expect(second).toContain(ANSWER);
    // Nothing more came on the idle one after its answer.
    expect(idle.received().endsWith(ANSWER) || idle.received().endsWith(`${ANSWER}\n`)).toBe(true);
  });
});
