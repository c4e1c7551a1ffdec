import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import express, { type NextFunction, type Request, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlErrorFormat } from '../../edge/interfaces/graphql/graphql.error-body.js';
import { graphqlStatusOf, idempotency, respondWith } from '../../edge/idempotency/idempotency.js';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { membershipErrorFormat } from '../../edge/interfaces/membership/membership.error-body.js';
import type { Mode } from '../../core/principal.js';
import { createTestDatabase } from '../support/database.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;
let server: http.Server;
let base: string;
const accounts: Record<string, string> = {};

/** How often each handler really ran. */
const runs = new Map<string, number>();
const ran = (name: string) => runs.get(name) ?? 0;
function count(name: string): number {
  const n = ran(name) + 1;
  runs.set(name, n);
  return n;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lets the "slow" handler finish when the test says so. */
let releaseSlow: () => void = () => {};

function buildApp(identityOrm: MikroORM): express.Express {
  const app = express();
  // Stands in for the edge's authentication: the account and mode come from test headers.
  app.use((req: Request, _res: Response, next: NextFunction) => {
    const account = req.header('x-test-account') ?? 'acme';
    req.principal = {
      accountId: accounts[account],
      account,
      keyId: `key_${account}`,
      kind: 'live',
      mode: (req.header('x-test-mode') as Mode | undefined) ?? 'live',
    };
    (req as { id?: string }).id = req.header('x-request-id') ?? 'req_test';
    next();
  });

  // As /graphql will be: GraphQL error bodies, express.json after the middleware.
  app.use(
    '/graphql',
    idempotency(identityOrm, { respond: respondWith(graphqlErrorFormat), statusOf: graphqlStatusOf }),
    express.json({ limit: '1mb' }),
    (req: Request, res: Response) => {
      const run = count('graphql');
      const code = (req.body as { variables?: { errorCode?: string } }).variables?.errorCode;
      // Errors come with status 200, as Apollo sends them.
      if (code) res.json({ errors: [{ message: 'failed', extensions: { code } }], data: null });
      else res.json({ data: { run, echo: req.body } });
    },
  );

  app.use('/slow', idempotency(identityOrm, { respond: respondWith(membershipErrorFormat), waitMs: 300, pollMs: 20 }), async (_req: Request, res: Response) => {
    count('slow');
    await new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    res.status(201).json({ slow: true });
  });

  app.use('/small', idempotency(identityOrm, { respond: respondWith(membershipErrorFormat), bodyLimit: 16 }), express.raw({ type: () => true }), (_req: Request, res: Response) => {
    res.json({ run: count('small') });
  });

  app.use(idempotency(identityOrm, { respond: respondWith(membershipErrorFormat) }));
  const echo = (name: string, delay = 0) => async (req: Request, res: Response) => {
    const run = count(name);
    if (delay) await sleep(delay);
    res.status(201).json({ run, echo: req.body });
  };
  app.post('/json', express.json({ limit: '1mb' }), echo('json'));
  app.post('/concurrent', express.json(), echo('concurrent', 300));
  app.get('/json', (_req: Request, res: Response) => {
    res.json({ run: count('get') });
  });
  app.post('/raw', express.raw({ type: () => true, limit: '1mb' }), (req: Request, res: Response) => {
    const body = req.body as Buffer;
    res
      .status(202)
      .type('text/plain')
      .send(`run ${count('raw')}: ${body.length} bytes, sha256 ${createHash('sha256').update(body).digest('hex')}`);
  });
  app.post('/status/:status', (req: Request, res: Response) => {
    const status = Number(req.params.status);
    res.status(status).json({ run: count(`status-${status}`) });
  });
  app.post('/throws', () => {
    count('throws');
    throw new Error('boom');
  });
  app.post('/streamed', (_req: Request, res: Response) => {
    const run = count('streamed');
    res.status(200).type('application/x-ndjson');
    res.write('{"part":1}\n');
    res.write(Buffer.from('{"part":2}\n'));
    res.end(`{"run":${run}}\n`);
  });
  // What the edge's error handler does: any error is a 500.
  app.use((_error: Error, _req: Request, res: Response, _next: NextFunction) => {
    res.status(500).json({ error: { code: 'internal_error' } });
  });
  return app;
}

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openIdentityStore(db.url);
  const identity = new IdentityService(orm.em.fork());
  for (const slug of ['acme', 'globex']) accounts[slug] = (await identity.ensureAccount(slug)).id;
  server = http.createServer(buildApp(orm));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await orm?.close(true);
  await db?.drop();
});

let keyCounter = 0;
const freshKey = () => `key-${Date.now()}-${++keyCounter}`;

function post(path: string, key: string | undefined, body: string, headers: Record<string, string> = {}) {
  return fetch(base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }), ...headers },
    body,
  });
}

async function answer(response: Response | globalThis.Response) {
  const r = response as globalThis.Response;
  return { status: r.status, type: r.headers.get('content-type'), replayed: r.headers.get('idempotent-replayed'), body: await r.text() };
}

async function records(key: string) {
  return orm.em
    .getConnection()
    .execute(
      `select fingerprint, state, response_status, response_content_type, response_body, mode, account_id from identity.idempotency_record where key = ?`,
      [key],
    );
}

describe('a POST with an Idempotency-Key', () => {
  it('runs once; a retry with the same body gets the first status, content type and body back, marked as replayed', async () => {
    const key = freshKey();
    const payload = JSON.stringify({ name: 'Ann', tags: ['a', 'b'] });
    const first = await answer(await post('/json', key, payload));
    expect(first).toEqual({
      status: 201,
      type: 'application/json; charset=utf-8',
      replayed: null,
      body: JSON.stringify({ run: 1, echo: { name: 'Ann', tags: ['a', 'b'] } }),
    });
    const second = await answer(await post('/json', key, payload));
    expect(second).toEqual({ ...first, replayed: 'true' });
    expect(ran('json')).toBe(1);

    const [row] = await records(key);
    const expected = createHash('sha256').update(`POST /json\n${payload}`).digest('hex');
    expect(row).toMatchObject({ fingerprint: expected, state: 'completed', response_status: 201, response_content_type: 'application/json; charset=utf-8', mode: 'live', account_id: accounts.acme });
    expect(Buffer.from(row.response_body).toString()).toBe(first.body);
  });

  it('leaves a large body intact for express.raw after it, and replays a non-JSON answer byte for byte', async () => {
    const key = freshKey();
    const bytes = new Uint8Array(700_000).map((_, i) => (i * 7919) % 256);
    // Sent as a stream, so the body arrives in many chunks and after the middleware starts reading.
    const streamed = () =>
      new ReadableStream<Uint8Array>({
        async start(controller) {
          for (let offset = 0; offset < bytes.length; offset += 64_000) {
            controller.enqueue(bytes.slice(offset, offset + 64_000));
            await sleep(2);
          }
          controller.close();
        },
      });
    const send = () =>
      fetch(base + '/raw', { method: 'POST', headers: { 'idempotency-key': key, 'content-type': 'application/octet-stream' }, body: streamed(), duplex: 'half' } as RequestInit);
    const first = await answer(await send());
    const sha = createHash('sha256').update(bytes).digest('hex');
    expect(first).toEqual({ status: 202, type: 'text/plain; charset=utf-8', replayed: null, body: `run 1: 700000 bytes, sha256 ${sha}` });
    expect(await answer(await send())).toEqual({ ...first, replayed: 'true' });
    expect(ran('raw')).toBe(1);
  });

  it('leaves the body for express.json after it, on a GraphQL-style mount', async () => {
    const key = freshKey();
    const query = JSON.stringify({ query: 'mutation { x }', variables: { big: 'y'.repeat(200_000) } });
    const first = await answer(await post('/graphql', key, query));
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toEqual({ data: { run: 1, echo: JSON.parse(query) } });
    expect(await answer(await post('/graphql', key, query))).toEqual({ ...first, replayed: 'true' });
    expect(ran('graphql')).toBe(1);
  });

  it('keeps and replays a response written in several chunks', async () => {
    const key = freshKey();
    const first = await answer(await post('/streamed', key, '{}'));
    expect(first).toMatchObject({ status: 200, type: 'application/x-ndjson', body: '{"part":1}\n{"part":2}\n{"run":1}\n' });
    expect(await answer(await post('/streamed', key, '{}'))).toEqual({ ...first, replayed: 'true' });
  });

  it('with an empty body is kept and replayed like any other', async () => {
    const key = freshKey();
    const first = await answer(await post('/status/201', key, ''));
    expect(first).toMatchObject({ status: 201, body: JSON.stringify({ run: 1 }) });
    expect(await answer(await post('/status/201', key, ''))).toEqual({ ...first, replayed: 'true' });
  });

  it('with another body, path or query string is refused with 400 idempotency_key_reused, and nothing runs', async () => {
    const key = freshKey();
    await post('/json', key, JSON.stringify({ a: 1 }));
    const before = ran('json');
    const rawBefore = ran('raw');
    for (const [path, body] of [
      ['/json', JSON.stringify({ a: 2 })],
      ['/json', JSON.stringify({ a: 1 }) + ' '],
      ['/json?x=1', JSON.stringify({ a: 1 })],
      ['/raw', JSON.stringify({ a: 1 })],
    ]) {
      const response = await post(path, key, body, { 'x-request-id': 'req_reuse' });
      expect(response.status).toBe(400);
      expect(response.headers.get('idempotent-replayed')).toBeNull();
      expect(await response.json()).toEqual({
        error: {
          type: 'invalid_request_error',
          code: 'idempotency_key_reused',
          message: expect.stringContaining('same method, path and body'),
          param: null,
          request_id: 'req_reuse',
        },
      });
    }
    expect(ran('json')).toBe(before);
    expect(ran('raw')).toBe(rawBefore);
  });

  it('is refused in a GraphQL error body on a GraphQL mount', async () => {
    const key = freshKey();
    await post('/graphql', key, JSON.stringify({ query: '{ a }' }));
    const response = await post('/graphql', key, JSON.stringify({ query: '{ b }' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ message: expect.any(String), extensions: { code: 'BAD_REQUEST', reason: 'idempotency_key_reused' } }],
    });
  });

  it('on a GraphQL mount is released after an internal error sent with status 200, and kept after a client error', async () => {
    const internal = freshKey();
    const failing = JSON.stringify({ query: 'mutation { x }', variables: { errorCode: 'INTERNAL_SERVER_ERROR' } });
    const before = ran('graphql');
    expect((await post('/graphql', internal, failing)).status).toBe(200);
    expect(await answer(await post('/graphql', internal, failing))).toMatchObject({ status: 200, replayed: null });
    expect(ran('graphql')).toBe(before + 2);

    const client = freshKey();
    const refused = JSON.stringify({ query: 'mutation { x }', variables: { errorCode: 'BAD_USER_INPUT' } });
    const first = await answer(await post('/graphql', client, refused));
    expect(await answer(await post('/graphql', client, refused))).toEqual({ ...first, replayed: 'true' });
    expect(ran('graphql')).toBe(before + 3);
  });

  it('sent ten times at once runs once, and all ten get the same answer', async () => {
    const key = freshKey();
    const payload = JSON.stringify({ name: 'Concurrent' });
    const answers = await Promise.all(Array.from({ length: 10 }, () => post('/concurrent', key, payload).then(answer)));
    expect(ran('concurrent')).toBe(1);
    const expected = { status: 201, type: 'application/json; charset=utf-8', body: JSON.stringify({ run: 1, echo: { name: 'Concurrent' } }) };
    for (const a of answers) expect(a).toMatchObject(expected);
    expect(answers.filter((a) => a.replayed === null)).toHaveLength(1);
    expect(answers.filter((a) => a.replayed === 'true')).toHaveLength(9);
  });

  it('waiting longer than its wait for a first request still running gets 409 idempotency_key_in_use, then the replay', async () => {
    const key = freshKey();
    const first = post('/slow', key, '{}');
    while (ran('slow') === 0) await sleep(10);
    const waited = await post('/slow', key, '{}');
    expect(waited.status).toBe(409);
    expect((await waited.json()).error).toMatchObject({ code: 'idempotency_key_in_use', type: 'invalid_request_error' });
    releaseSlow();
    expect((await first).status).toBe(201);
    const retry = await post('/slow', key, '{}');
    expect(await answer(retry)).toMatchObject({ status: 201, replayed: 'true', body: JSON.stringify({ slow: true }) });
    expect(ran('slow')).toBe(1);
  });

  it('that got a 5xx, a 408 or a 429 is not kept: the retry runs again', async () => {
    for (const status of [500, 503, 408, 429]) {
      const key = freshKey();
      expect((await post(`/status/${status}`, key, '{}')).status).toBe(status);
      const retry = await answer(await post(`/status/${status}`, key, '{}'));
      expect(retry).toMatchObject({ status, replayed: null, body: JSON.stringify({ run: 2 }) });
      expect(await records(key)).toEqual([]);
    }
    const key = freshKey();
    expect((await post('/throws', key, '{}')).status).toBe(500);
    expect((await post('/throws', key, '{}')).status).toBe(500);
    expect(ran('throws')).toBe(2);
  });

  it('that got another 4xx keeps it, as Stripe does: the retry gets the same refusal', async () => {
    for (const status of [400, 404, 409, 422]) {
      const key = freshKey();
      const first = await answer(await post(`/status/${status}`, key, '{}'));
      expect(first).toMatchObject({ status, body: JSON.stringify({ run: 1 }) });
      expect(await answer(await post(`/status/${status}`, key, '{}'))).toEqual({ ...first, replayed: 'true' });
    }
  });

  it('belongs to one account and one mode: the same key elsewhere runs again', async () => {
    const key = freshKey();
    const payload = JSON.stringify({ x: 1 });
    const runBody = async (headers: Record<string, string>) => JSON.parse((await answer(await post('/json', key, payload, headers))).body).run;
    const acmeLive = await runBody({});
    const globexLive = await runBody({ 'x-test-account': 'globex' });
    const acmeTest = await runBody({ 'x-test-mode': 'test' });
    expect(new Set([acmeLive, globexLive, acmeTest]).size).toBe(3);
    // And each of them replays its own.
    expect(await runBody({ 'x-test-account': 'globex' })).toBe(globexLive);
    expect(await runBody({ 'x-test-mode': 'test' })).toBe(acmeTest);
    expect(await runBody({})).toBe(acmeLive);
    expect((await records(key)).map((r) => `${r.account_id}/${r.mode}`).sort()).toEqual(
      [`${accounts.acme}/live`, `${accounts.acme}/test`, `${accounts.globex}/live`].sort(),
    );
  });

  it('older than 24 hours is not replayed: the request runs again and is kept anew', async () => {
    const key = freshKey();
    const payload = JSON.stringify({ old: true });
    const first = JSON.parse((await answer(await post('/json', key, payload))).body);
    await orm.em.getConnection().execute(`update identity.idempotency_record set created_at = now() - interval '24 hours 1 minute' where key = ?`, [key]);
    const again = await answer(await post('/json', key, payload));
    expect(again.replayed).toBeNull();
    expect(JSON.parse(again.body).run).toBe(first.run + 1);
    // Even another body is fine once the old record is gone.
    const other = freshKey();
    await post('/json', other, payload);
    await orm.em.getConnection().execute(`update identity.idempotency_record set created_at = now() - interval '25 hours' where key = ?`, [other]);
    expect((await post('/json', other, JSON.stringify({ different: true }))).status).toBe(201);
  });

  it('storing a new key sweeps records older than 24 hours', async () => {
    const connection = orm.em.getConnection();
    await connection.execute(
      `insert into identity.idempotency_record (id, account_id, mode, key, fingerprint, state, created_at)
       select gen_random_uuid(), ?, 'live', 'stale-' || n, repeat('0', 64), 'completed', now() - interval '30 hours' from generate_series(1, 5) n`,
      [accounts.acme],
    );
    await post('/json', freshKey(), '{}');
    // The sweep follows the response: wait for it to be done (bounded), not for a guessed time.
    const stale = () => connection.execute(`select key from identity.idempotency_record where key like 'stale-%'`);
    const deadline = Date.now() + 10_000;
    while ((await stale()).length > 0 && Date.now() < deadline) await sleep(20);
    expect(await stale()).toEqual([]);
  });

  it("whose first request's process died (its owner lock is free) is taken over at once, however recent", async () => {
    const key = freshKey();
    const payload = '{"abandoned":true}';
    const fingerprint = createHash('sha256').update(`POST /json\n${payload}`).digest('hex');
    // A claim just made by a process whose lock nobody holds any more.
    await orm.em.getConnection().execute(
      `insert into identity.idempotency_record (id, account_id, mode, key, fingerprint, state, owner_lock, created_at)
       values (gen_random_uuid(), ?, 'live', ?, ?, 'in_progress', 12345, now())`,
      [accounts.acme, key, fingerprint],
    );
    const before = ran('json');
    const response = await answer(await post('/json', key, payload));
    expect(response).toMatchObject({ status: 201, replayed: null });
    expect(ran('json')).toBe(before + 1);
  });

  it('must be 1 to 255 printable ASCII characters, else 400 invalid_idempotency_key', async () => {
    for (const key of ['k'.repeat(256), '']) {
      const response = await post('/json', key, '{}');
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatchObject({ code: 'invalid_idempotency_key' });
    }
    const before = ran('json');
    expect((await post('/json', 'k'.repeat(254) + '~', '{}')).status).toBe(201);
    expect(await post('/json', 'key with spaces: "and" \'quotes\' \\ ?', '{}').then(answer)).toMatchObject({ status: 201 });
    expect(ran('json')).toBe(before + 2);
  });

  it('with a body over the limit is refused with 413 without running', async () => {
    const response = await post('/small', freshKey(), 'x'.repeat(17));
    expect(response.status).toBe(413);
    expect((await response.json()).error).toMatchObject({ code: 'payload_too_large' });
    expect(ran('small')).toBe(0);
    expect((await post('/small', freshKey(), 'x'.repeat(16))).status).toBe(200);
  });
});

describe('requests the middleware leaves alone', () => {
  it('a POST without the header runs every time and keeps nothing', async () => {
    const before = ran('json');
    await post('/json', undefined, '{"n":1}');
    await post('/json', undefined, '{"n":1}');
    expect(ran('json')).toBe(before + 2);
  });

  it('a GET with the header runs every time and keeps nothing', async () => {
    const key = freshKey();
    for (let i = 1; i <= 2; i++) {
      const response = await fetch(base + '/json', { headers: { 'idempotency-key': key } });
      expect(await response.json()).toEqual({ run: i });
      expect(response.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(await records(key)).toEqual([]);
  });
});
