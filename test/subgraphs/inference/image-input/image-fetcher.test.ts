import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../subgraphs/inference/engine/text-engine.js';
import { guardedImageFetcher, isAddressOrNetwork, MAX_IMAGE_REDIRECTS } from '../../../../subgraphs/inference/image-input/image-fetcher.js';

/**
 * The image fetcher behind the SSRF guard, against loopback servers on 127.0.0.1 and 127.0.0.2:
 * a policy that lets 127.0.0.1 through (an internal image host) still refuses every other private
 * address, on the first hop and on every redirect, before connecting to it.
 */
let first: http.Server;
let second: http.Server;
let base: string;
let secondBase: string;
let secondConnections = 0;
let slowHits = 0;

const IMAGE = Buffer.from('GIF89a-not-really-but-bytes');

function listen(server: http.Server, host: string): Promise<string> {
  return new Promise((resolve) => server.listen(0, host, () => resolve(`http://${host}:${(server.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  second = http.createServer((_req, res) => res.writeHead(200).end(IMAGE));
  second.on('connection', () => secondConnections++);
  secondBase = await listen(second, '127.0.0.2');
  first = http.createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/image') return void res.writeHead(200).end(IMAGE);
    if (path === '/to-second') return void res.writeHead(307, { location: `${secondBase}/image` }).end();
    if (path === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    if (path === '/slow-hop') {
      slowHits++;
      return void res.writeHead(302, { location: '/never' }).end();
    }
    if (path === '/never') return; // holds the request open
    res.writeHead(404).end();
  });
  base = await listen(first, '127.0.0.1');
});

afterAll(async () => {
  for (const server of [first, second]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const limits = (timeoutMs = 5_000) => ({ maxBytes: 1_000, timeoutMs, signal: new AbortController().signal });

async function refused(promise: Promise<unknown>): Promise<EngineError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(EngineError);
  return error as EngineError;
}

describe('guardedImageFetcher', () => {
  it('reads an allowed host, by address or network, and refuses it under the default policy', async () => {
    for (const policy of [['127.0.0.1'], ['127.0.0.0/30'], true] as const) {
      expect(await guardedImageFetcher(policy)(new URL(`${base}/image`), limits())).toEqual(IMAGE);
    }
    const error = await refused(guardedImageFetcher(false)(new URL(`${base}/image`), limits()));
    expect(error.message).toBe('The image URL is not allowed');
  });

  it('refuses a redirect to a private address the policy does not list, without connecting to it', async () => {
    const before = secondConnections;
    const error = await refused(guardedImageFetcher(['127.0.0.1'])(new URL(`${base}/to-second`), limits()));
    expect(error.message).toBe('The image URL is not allowed');
    expect(secondConnections).toBe(before);
    // Listed, the same redirect is followed.
    expect(await guardedImageFetcher(['127.0.0.1', '127.0.0.2'])(new URL(`${base}/to-second`), limits())).toEqual(IMAGE);
  });

  it(`stops after ${MAX_IMAGE_REDIRECTS} redirects`, async () => {
    const error = await refused(guardedImageFetcher(['127.0.0.1'])(new URL(`${base}/loop`), limits()));
    expect(error.message).toBe(`The image URL redirected more than ${MAX_IMAGE_REDIRECTS} times`);
  });

  it('holds one time limit over every hop', async () => {
    const before = slowHits;
    const error = await refused(guardedImageFetcher(['127.0.0.1'])(new URL(`${base}/slow-hop`), limits(300)));
    expect(error.message).toBe('The image URL did not answer within 300 ms');
    expect(slowHits).toBe(before + 1);
  });

  it('takes addresses and CIDR networks as the policy, nothing else', () => {
    for (const entry of ['127.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', '192.168.1.0/24']) expect(isAddressOrNetwork(entry), entry).toBe(true);
    for (const entry of ['localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0.0/', '']) expect(isAddressOrNetwork(entry), entry).toBe(false);
  });
});
