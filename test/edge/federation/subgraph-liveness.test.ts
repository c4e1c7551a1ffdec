import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { whileHostAnswers } from '../../../edge/federation/subgraph-liveness.js';

/** A server that holds every request until `answer()`; `connections` counts accepted sockets (the probes among them). */
function heldServer() {
  let connections = 0;
  const held: http.ServerResponse[] = [];
  const waiters: (() => void)[] = [];
  const server = http.createServer((_req, res) => {
    held.push(res);
    waiters.splice(0).forEach((w) => w());
  });
  server.on('connection', () => {
    connections += 1;
    waiters.splice(0).forEach((w) => w());
  });
  const changed = () => new Promise<void>((resolve) => waiters.push(resolve));
  return {
    server,
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    connections: () => connections,
    held: () => held.length,
    changed,
    answer: () => held.splice(0).forEach((res) => res.end('{"data":{}}')),
  };
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('a subgraph fetch while its host answers', () => {
  it('lets a slow answer from a host that still accepts connections finish', async () => {
    const subgraph = heldServer();
    servers.push(subgraph.server);
    await new Promise<void>((resolve) => subgraph.server.listen(0, '127.0.0.1', resolve));
    const answered = whileHostAnswers(subgraph.url(), (signal) => request(subgraph.url(), { method: 'POST', body: '{}', signal }), 20);
    // The request, then three probes that found the host there, before it is answered.
    while (subgraph.held() < 1 || subgraph.connections() < 4) await subgraph.changed();
    subgraph.answer();
    const response = await answered;
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toEqual({ data: {} });
  });

  it('gives up with the socket\'s code once the host stops accepting, while the connection stays silent', async () => {
    const subgraph = heldServer();
    servers.push(subgraph.server);
    await new Promise<void>((resolve) => subgraph.server.listen(0, '127.0.0.1', resolve));
    const url = subgraph.url();
    const answered = whileHostAnswers(url, (signal) => request(url, { method: 'POST', body: '{}', signal }), 20);
    while (subgraph.held() < 1) await subgraph.changed();
    // No more connections accepted; the request's own connection stays open and says nothing.
    subgraph.server.close();
    await expect(answered).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
