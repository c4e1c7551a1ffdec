import net from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.js';
import type { RequestBounds } from '../../edge/edge-settings.js';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { DEFAULT_REQUEST_BOUNDS, loadConfig, SUBGRAPH_NAMES, type SubgraphName } from '../../platform/config.js';
import { startEdgeService } from '../../platform/platform.js';
import { createTestDatabase } from '../support/database.js';
import { testConfig } from '../support/platform-harness.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';

/**
 * The edge's bounds on how a request arrives, from outside over real sockets that trickle bytes:
 * a body slower than EDGE_BODY_MIN_BYTES_PER_SEC, a request longer than EDGE_REQUEST_TIMEOUT_MS and
 * headers longer than EDGE_HEADERS_TIMEOUT_MS are answered 408 in the interface's error body and
 * their connection closed; a slow body that keeps the rate passes. Each edge has small bounds, and
 * each test waits for the connection's close, never for a clock.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let key: string;
const lines: Record<string, any>[] = [];
const logger = createLogger('info', 'platform', { write: (line: string) => void lines.push(JSON.parse(line)) });
const stops: (() => Promise<void>)[] = [];
/** Its body's rate bounds it: two seconds a window, 200 bytes a second; the whole request has ten minutes. */
let rateBound: number;
/** Its whole request's time bounds it (1.5 s, headers 1 s); the body's rate is not checked within a test's time. */
let timeBound: number;

// Nothing is fetched from a subgraph here: the requests never arrive, or ask for __typename.
const nowhere = Object.fromEntries(SUBGRAPH_NAMES.map((name) => [name, 'http://127.0.0.1:1/graphql'])) as Record<SubgraphName, string>;

async function startEdge(edgeRequests: RequestBounds): Promise<number> {
  const edge = await startEdgeService(testConfig({ edgeRequests }), identityOrm, nowhere, logger);
  stops.push(edge.stop);
  return edge.port;
}

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  key = (await new IdentityService(identityOrm.em.fork()).createKey({ account: 'bounds', kind: 'live' })).secret;
  rateBound = await startEdge({ headersTimeoutMs: 60_000, requestTimeoutMs: 600_000, bodyTimeoutMs: 2000, bodyMinBytesPerSecond: 200 });
  timeBound = await startEdge({ headersTimeoutMs: 1000, requestTimeoutMs: 1500, bodyTimeoutMs: 600_000, bodyMinBytesPerSecond: 0 });
}, 120_000);

afterAll(async () => {
  for (const stop of stops) await stop();
  await identityOrm?.close(true);
  await db?.drop();
});

interface Trickled {
  /** Everything the edge sent before the connection closed. */
  received: string;
  /** Bytes written after the opening. */
  trickled: number;
}

/**
 * Opens a connection, writes `opening` (and waits for `openingAnswered` in what comes back, for a
 * first request on the same connection), writes `head`, then `piece` every `everyMs` until the
 * edge closes the connection; resolves on its close.
 */
function trickle(port: number, options: { head: string; piece: string; everyMs: number; opening?: string; openingAnswered?: string }): Promise<Trickled> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let trickled = 0;
    let timer: NodeJS.Timeout | undefined;
    const start = () => {
      socket.write(options.head);
      timer = setInterval(() => {
        if (!socket.writable) return;
        socket.write(options.piece);
        trickled += options.piece.length;
      }, options.everyMs);
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      const before = received;
      received += chunk;
      if (options.openingAnswered && !before.includes(options.openingAnswered) && received.includes(options.openingAnswered)) start();
    });
    // The edge closes while bytes are still coming: a reset after its answer is expected.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ received, trickled });
    });
    socket.on('connect', () => {
      if (options.opening) socket.write(options.opening);
      else start();
    });
  });
}

function post(path: string, contentLength: number, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n${extra}\r\n`;
}

/** The last response in `received`: its status, headers and JSON body. */
function lastAnswer(received: string): { status: number; headers: Record<string, string>; body: any } {
  const start = received.lastIndexOf('HTTP/1.1 ');
  expect(start, `no response in ${JSON.stringify(received)}`).toBeGreaterThanOrEqual(0);
  const [head, body] = received.slice(start).split('\r\n\r\n');
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}

describe('a request body slower than the minimum rate', () => {
  it('is answered 408 in GraphQL\'s error body and its connection closed, long before the whole request\'s bound', async () => {
    const { received, trickled } = await trickle(rateBound, { head: post('/graphql', 1000, 'X-Request-Id: slow-graphql\r\n') + '{', piece: ' ', everyMs: 50 });
    const answer = lastAnswer(received);
    expect(answer.status).toBe(408);
    expect(answer.headers.connection).toBe('close');
    expect(answer.headers['x-request-id']).toBe('slow-graphql');
    expect(answer.body.errors[0]).toMatchObject({ message: expect.stringContaining('slower than 200 bytes per second'), extensions: { reason: 'request_timeout' } });
    expect(trickled).toBeLessThan(1000);
    // The request log says what happened to it.
    expect(lines.find((line) => line.req?.id === 'slow-graphql')).toMatchObject({ msg: 'request timed out before it had arrived', timedOut: true, res: { statusCode: 408 } });
  });

  it('is answered in the interface\'s error body on REST, also when it stops arriving altogether', async () => {
    // Half a body, then nothing.
    const { received } = await trickle(rateBound, { head: post('/api/v1/members', 100, 'X-Request-Id: stalled-rest\r\n') + '{"name":"Ada",', piece: '', everyMs: 1000 });
    const answer = lastAnswer(received);
    expect(answer.status).toBe(408);
    expect(answer.body).toEqual({
      error: { type: 'invalid_request_error', code: 'request_timeout', message: expect.stringContaining('slower than'), param: null, request_id: 'stalled-rest' },
    });
  });

  it('is answered 408 on a keep-alive connection that served a request before it', async () => {
    const query = JSON.stringify({ query: '{ __typename }' });
    const { received } = await trickle(rateBound, {
      opening: post('/graphql', Buffer.byteLength(query)) + query,
      openingAnswered: '{"data":{"__typename":"Query"}}',
      head: post('/graphql', 1000) + '{',
      piece: ' ',
      everyMs: 50,
    });
    expect(received.startsWith('HTTP/1.1 200 OK')).toBe(true);
    expect(lastAnswer(received).status).toBe(408);
  });
});

describe('a slow body that keeps the rate', () => {
  it('is served', async () => {
    const body = JSON.stringify({ query: `{ __typename }${' '.repeat(2400)}` });
    const socket = net.connect(rateBound, '127.0.0.1');
    socket.setEncoding('utf8');
    let received = '';
    socket.on('data', (chunk: string) => (received += chunk));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(post('/graphql', Buffer.byteLength(body), 'Connection: close\r\n'));
    // 300 bytes every 100 ms: well over 200 bytes a second, in a dozen pieces over more than one window.
    for (let at = 0; at < body.length; at += 300) {
      socket.write(body.slice(at, at + 300));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await closed;
    const answer = lastAnswer(received);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { __typename: 'Query' } });
  });
});

describe('the whole request\'s time', () => {
  it('ends a request whose body keeps coming past EDGE_REQUEST_TIMEOUT_MS with 408', async () => {
    const { received, trickled } = await trickle(timeBound, { head: post('/api/v1/members', 100_000, 'X-Request-Id: too-long\r\n'), piece: 'x', everyMs: 20 });
    const answer = lastAnswer(received);
    expect(answer.status).toBe(408);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body.error).toMatchObject({ code: 'request_timeout', message: 'The request did not arrive within 1500 ms', request_id: 'too-long' });
    expect(trickled).toBeLessThan(100_000);
  });

  it('ends headers that do not end within EDGE_HEADERS_TIMEOUT_MS with 408', async () => {
    const { received } = await trickle(timeBound, { head: 'GET /graphql HTTP/1.1\r\nHost: edge\r\n', piece: 'X-Slow: x\r\n', everyMs: 50 });
    const answer = lastAnswer(received);
    expect(answer.status).toBe(408);
    expect(answer.body.errors[0]).toMatchObject({ message: 'The request headers did not arrive within 1000 ms', extensions: { reason: 'request_timeout' } });
  });
});

describe('requests that cannot be parsed', () => {
  it('still get Node\'s answers: 400 for a malformed request, 431 for headers over its limit', async () => {
    const malformed = await trickle(rateBound, { head: 'NOT HTTP AT ALL\r\n\r\n', piece: '', everyMs: 1000 });
    expect(malformed.received).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    const huge = await trickle(rateBound, { head: `GET /graphql HTTP/1.1\r\nHost: edge\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`, piece: '', everyMs: 1000 });
    expect(huge.received).toBe('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
  });
});

describe('the settings', () => {
  const env = { DATA_DIR: '/tmp/unused', INTERNAL_SECRET: TEST_SECRET };
  it('default to bounds a real upload fits in, and are read from EDGE_*', () => {
    expect(loadConfig(env).edgeRequests).toEqual(DEFAULT_REQUEST_BOUNDS);
    // The document cap (25 MiB) arrives within the whole request's bound at 45 kB/s.
    expect((25 * 1024 * 1024) / (DEFAULT_REQUEST_BOUNDS.requestTimeoutMs / 1000)).toBeLessThan(45_000);
    const read = loadConfig({ ...env, EDGE_HEADERS_TIMEOUT_MS: '5000', EDGE_REQUEST_TIMEOUT_MS: '90000', EDGE_BODY_TIMEOUT_MS: '10000', EDGE_BODY_MIN_BYTES_PER_SEC: '0' });
    expect(read.edgeRequests).toEqual({ headersTimeoutMs: 5000, requestTimeoutMs: 90_000, bodyTimeoutMs: 10_000, bodyMinBytesPerSecond: 0 });
  });

  it('refuses headers allowed longer than the whole request, and bounds that are no durations', () => {
    expect(() => loadConfig({ ...env, EDGE_HEADERS_TIMEOUT_MS: '60000', EDGE_REQUEST_TIMEOUT_MS: '30000' })).toThrow(/EDGE_HEADERS_TIMEOUT_MS .* at most EDGE_REQUEST_TIMEOUT_MS/);
    for (const name of ['EDGE_REQUEST_TIMEOUT_MS', 'EDGE_BODY_TIMEOUT_MS']) expect(() => loadConfig({ ...env, [name]: '0' })).toThrow(new RegExp(name));
    expect(() => loadConfig({ ...env, EDGE_BODY_MIN_BYTES_PER_SEC: 'fast' })).toThrow(/EDGE_BODY_MIN_BYTES_PER_SEC/);
  });
});
