import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { GraphQLDataSourceRequestKind } from '@apollo/gateway/dist/datasources/types.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deduplicatingFetcher, PrincipalSigner, SigningDataSource, subgraphFetcher } from '../../edge/federation/signing-data-source.js';
import { PRINCIPAL_HEADER, verifyPrincipal, type Principal } from '../../core/principal.js';

const SECRET = 'a-test-secret-of-at-least-thirty-two-characters';
const alice: Principal = { accountId: 'acc_1', account: 'acme', keyId: 'key_a', kind: 'live', mode: 'live' };
const bob: Principal = { ...alice, keyId: 'key_b' };

/**
 * A loopback subgraph that answers every request after 100 ms (long enough for the calls of a
 * test to overlap) with the principal it verified and a per-request counter, so a shared answer
 * and a separate one can be told apart.
 */
let server: http.Server;
let url: string;
const received: { principal: string; body: string; requestId?: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const principal = verifyPrincipal(req.headers[PRINCIPAL_HEADER] as string, SECRET);
      received.push({ principal: principal.keyId, body, requestId: req.headers['x-request-id'] as string | undefined });
      const n = received.length;
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.setHeader('x-tag', ['a', 'b']);
        res.end(JSON.stringify({ data: { me: { keyId: principal.keyId, n, tags: ['x'] } } }));
      }, 100);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  received.length = 0;
});

function send(source: SigningDataSource, principal: Principal, query: string, variables: Record<string, unknown> = {}, requestId = 'req') {
  return source.process({
    kind: GraphQLDataSourceRequestKind.INCOMING_OPERATION,
    request: { query, variables },
    context: { principal, requestId } as never,
    incomingRequestContext: {} as never,
    document: undefined as never,
    pathInIncomingRequest: [],
  });
}

describe('in-flight deduplication of subgraph queries', () => {
  it('sends identical overlapping queries of one principal once, each caller getting its own copy', async () => {
    const source = new SigningDataSource(url, SECRET, 'test');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(source, alice, 'query Me__test__0 { me { keyId n tags } }', {}, `req-${i}`)));
    expect(received).toHaveLength(1);
    expect(received[0].requestId).toBe('req-0');
    for (const answer of answers) expect(answer.data).toEqual({ me: { keyId: 'key_a', n: 1, tags: ['x'] } });
    // The gateway merges entity results into what it is given: one caller's change is its own.
    (answers[0].data as { me: { tags: string[] } }).me.tags.push('changed');
    expect((answers[1].data as { me: { tags: string[] } }).me.tags).toEqual(['x']);
  });

  it('never shares between principals, documents or variables, and not once the first answer is in', async () => {
    const source = new SigningDataSource(url, SECRET, 'test');
    const answers = await Promise.all([
      send(source, alice, '{ me { keyId n } }'),
      send(source, bob, '{ me { keyId n } }'),
      send(source, alice, '{ me { keyId } }'),
      send(source, alice, 'query($id: ID!) { me(id: $id) { keyId n } }', { id: '1' }),
      send(source, alice, 'query($id: ID!) { me(id: $id) { keyId n } }', { id: '2' }),
    ]);
    expect(received).toHaveLength(5);
    expect(answers.map((answer) => (answer.data as { me: { keyId: string } }).me.keyId)).toEqual(['key_a', 'key_b', 'key_a', 'key_a', 'key_a']);
    await send(source, alice, '{ me { keyId n } }');
    expect(received).toHaveLength(6);
  });

  it('sends every mutation, even identical overlapping ones', async () => {
    const source = new SigningDataSource(url, SECRET, 'test');
    await Promise.all(Array.from({ length: 5 }, () => send(source, alice, 'mutation { touch { keyId n } }')));
    expect(received).toHaveLength(5);
  });

  it('can be switched off (SUBGRAPH_QUERY_DEDUPLICATION=false)', async () => {
    const source = new SigningDataSource(url, SECRET, 'test', undefined, false);
    await Promise.all(Array.from({ length: 5 }, () => send(source, alice, '{ me { keyId n } }')));
    expect(received).toHaveLength(5);
  });

  it('gives every waiting caller the failure of a shared call, and keeps no failure for later callers', async () => {
    let calls = 0;
    const fetcher = deduplicatingFetcher(async (target, init) => {
      calls += 1;
      if (calls === 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      }
      return subgraphFetcher(target, init);
    });
    const init = { method: 'POST', headers: { [PRINCIPAL_HEADER]: new PrincipalSigner(SECRET).sign(alice), 'content-type': 'application/json' }, body: '{"query":"{ me { n } }"}' };
    const results = await Promise.allSettled([fetcher(url, init), fetcher(url, init), fetcher(url, init)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(calls).toBe(1);
    const answer = await fetcher(url, init);
    expect(answer.status).toBe(200);
    expect(calls).toBe(2);
    expect(received).toHaveLength(1);
  });
});

describe('subgraph responses as the data source reads them', () => {
  it('have headers read by any case of their name, repeated ones joined, iterable, and not to be changed; shared copies keep them', async () => {
    const init = { method: 'POST', headers: { [PRINCIPAL_HEADER]: new PrincipalSigner(SECRET).sign(alice), 'content-type': 'application/json' }, body: '{"query":"{ me { n } }"}' };
    for (const fetcher of [subgraphFetcher, deduplicatingFetcher()]) {
      const response = await fetcher(url, init);
      expect(response.headers.get('Content-Type')).toBe('application/json');
      expect(response.headers.has('CONTENT-TYPE')).toBe(true);
      expect(response.headers.get('x-missing')).toBeNull();
      expect(response.headers.get('X-Tag')).toBe('a, b');
      expect([...response.headers].filter(([name]) => name === 'x-tag')).toEqual([['x-tag', 'a'], ['x-tag', 'b']]);
      expect(new Map(response.headers).get('content-type')).toBe('application/json');
      expect([...response.headers].map(([name]) => name)).toContain('content-length');
      expect(() => response.headers.set('content-type', 'text/plain')).toThrow(TypeError);
      expect(JSON.parse(await response.text())).toMatchObject({ data: { me: { keyId: 'key_a' } } });
    }
  });
});
