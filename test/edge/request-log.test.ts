import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.js';
import { requestLogging } from '../../core/request-log.js';

/** A server with the request logger in front of `handler`, its log lines collected. */
async function serve(level: string, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const lines: Record<string, any>[] = [];
  const logger = createLogger(level, 'test', { write: (line: string) => void lines.push(JSON.parse(line)) });
  let ids = 0;
  const log = requestLogging(logger, { genReqId: () => `r${++ids}`, ignore: (req) => req.url === '/health' });
  const server = http.createServer((req, res) => log(req, res, () => handler(req, res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { lines, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});
const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('request logging', () => {
  it('writes one line per request when its response is done: the request and the cookies it sets redacted, the status, the time taken', async () => {
    const { lines, url } = await serve('info', (_req, res) => {
      res.setHeader('set-cookie', 'dash_session=session_secret; HttpOnly');
      res.end('ok');
    });
    await (await fetch(`${url}/members?limit=2&api_key=sk_live_secret`, { headers: { authorization: 'Bearer sk_live_secret', 'x-csrf-token': 'csrf_secret', 'x-other': 'kept' } })).text();
    await settled();
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({ level: 30, msg: 'request completed', req: { id: 'r1', method: 'GET', url: '/members?limit=2&api_key=[redacted]' }, res: { statusCode: 200 } });
    expect(line.req.headers.authorization).toBe('[redacted]');
    expect(line.req.headers['x-other']).toBe('kept');
    expect(typeof line.responseTime).toBe('number');
    expect(line.res.headers['set-cookie']).toBe('[redacted]');
    for (const secret of ['sk_live_secret', 'session_secret', 'csrf_secret']) expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it('writes a 5xx at error level, with an error saying so', async () => {
    const { lines, url } = await serve('info', (_req, res) => {
      res.statusCode = 503;
      res.end();
    });
    await (await fetch(url)).text();
    await settled();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'request errored', res: { statusCode: 503 }, err: { message: 'failed with status code 503' } });
  });

  it('says so when the connection closes before the response is sent', async () => {
    const { lines, url } = await serve('info', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const controller = new AbortController();
    const response = await fetch(url, { signal: controller.signal });
    expect(response.status).toBe(200);
    controller.abort();
    await response.text().catch(() => undefined);
    for (let i = 0; i < 50 && !lines.length; i++) await settled();
    expect(lines).toEqual([expect.objectContaining({ level: 30, aborted: true, msg: 'request closed before its response was sent', res: expect.objectContaining({ statusCode: 200 }) })]);
  });

  it("gives req.log lines the request's id, and writes nothing for an ignored path or below the level", async () => {
    const { lines, url } = await serve('info', (req, res) => {
      req.log.warn({ detail: 'x' }, 'a handler says something');
      res.end();
    });
    await (await fetch(`${url}/health`)).text();
    await settled();
    expect(lines).toEqual([expect.objectContaining({ level: 40, reqId: 'r1', detail: 'x', msg: 'a handler says something' })]);

    const quiet = await serve('warn', (_req, res) => res.end());
    await (await fetch(quiet.url)).text();
    await settled();
    expect(quiet.lines).toEqual([]);
  });
});
