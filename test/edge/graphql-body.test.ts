import { AsyncLocalStorage } from 'node:async_hooks';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlBody } from '../../edge/interfaces/graphql/graphql-body.js';

/**
 * /graphql's body reader against express.json itself, the independent reading: every body, good
 * or bad, must come out as express.json makes it (the parsed value, or its status, type and words).
 */
const LIMIT = 64;
const requestContext = new AsyncLocalStorage<string>();
let ours: string;
let theirs: string;
const servers: http.Server[] = [];

async function serve(parser: RequestHandler): Promise<string> {
  const app = express();
  // The handlers after the parser run in the request's async context (spans, subgraph fetches).
  app.post('/', (_req, _res, next) => requestContext.run('the request', next), parser, (req, res) => {
    res.json({ body: req.body === undefined ? '(undefined)' : req.body, hasBody: 'body' in req, context: requestContext.getStore() ?? null });
  });
  app.use((error: Error & { status?: number; type?: string }, _req: Request, res: Response, _next: NextFunction) => {
    res.status(error.status ?? 500).json({ error: { type: error.type, message: error.message } });
  });
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

beforeAll(async () => {
  ours = await serve(graphqlBody(LIMIT));
  theirs = await serve(express.json({ limit: LIMIT }));
});

afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
});

async function post(url: string, body: string | Buffer, headers: Record<string, string>) {
  const response = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });
  return { status: response.status, body: await response.json() };
}

const JSON_TYPE = { 'content-type': 'application/json' };
const CASES: [string, string | Buffer, Record<string, string>][] = [
  ['an object', '{"query":"{ a }","variables":{"id":"1"}}', JSON_TYPE],
  ['an array', '[{"query":"{ a }"}]', JSON_TYPE],
  ['unicode', '{"query":"{ \u00e9t\u00e9 \ud83d\ude00 }"}', JSON_TYPE],
  ['a charset', '{"a":1}', { 'content-type': 'application/json; charset=utf-8' }],
  ['leading blanks', '  \n{"a":1}', JSON_TYPE],
  ['a cut object', '{"query":', JSON_TYPE],
  ['trailing bytes', '{"a":1}x', JSON_TYPE],
  ['a bare string (strict)', '"query"', JSON_TYPE],
  ['a number (strict)', '12', JSON_TYPE],
  ['not JSON', 'query { a }', JSON_TYPE],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), JSON_TYPE],
  ['over the limit', `{"a":"${'x'.repeat(LIMIT)}"}`, JSON_TYPE],
  ['another content type', '{"a":1}', { 'content-type': 'text/plain' }],
  ['a JSON subtype', '{"a":1}', { 'content-type': 'application/graphql-response+json' }],
  ['another charset', '{"a":1}', { 'content-type': 'application/json; charset=latin1' }],
  ['gzip', gzipSync('{"a":1}'), { ...JSON_TYPE, 'content-encoding': 'gzip' }],
  ['an empty body', '', JSON_TYPE],
];

describe('the /graphql body reader', () => {
  it.each(CASES)('reads %s as express.json does', async (_name, body, headers) => {
    const [mine, reference] = [await post(ours, body, headers), await post(theirs, body, headers)];
    expect(mine).toEqual(reference);
  });

  it('parses the plain request itself (a body express.json could not have parsed is no proof)', async () => {
    const answer = await post(ours, '{"query":"{ a }"}', JSON_TYPE);
    expect(answer).toEqual({ status: 200, body: { body: { query: '{ a }' }, hasBody: true, context: 'the request' } });
  });
});
