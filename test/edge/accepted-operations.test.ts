import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apolloMiddleware } from '../../core/apollo-http.js';
import type { Principal } from '../../core/principal.js';
import { startFederatedGraph, type FederatedGraph } from '../../edge/federation/federated-graph.js';
import { acceptedOperations, contextFor } from '../../edge/interfaces/graphql/accepted-operations.js';
import { readSupergraph } from '../../schema/supergraph.js';

const SECRET = 'a-test-secret-of-at-least-thirty-two-characters';
const alice: Principal = { accountId: 'acc_1', account: 'acme', keyId: 'key_a', kind: 'live', mode: 'live' };

/**
 * A loopback membership subgraph that records each fetch: a member's phone fails beside the data
 * (an answer the gateway has to complete), anything else is the member.
 */
let subgraph: http.Server;
const fetched: string[] = [];
let edgeServer: http.Server;
let edgeUrl: string;
let graph: FederatedGraph;
/** Requests that reached Apollo Server's pipeline. */
let throughApollo = 0;

beforeAll(async () => {
  subgraph = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      fetched.push(body);
      res.setHeader('content-type', 'application/json');
      const { query } = JSON.parse(body) as { query: string };
      res.end(
        JSON.stringify(
          query.includes('phone')
            ? { data: { member: { id: 'a', phone: null } }, errors: [{ message: 'phone failed', path: ['member', 'phone'], extensions: { code: 'BAD_USER_INPUT' } }] }
            : { data: { member: { id: 'a', name: 'Ada' } } },
        ),
      );
    });
  });
  await new Promise<void>((resolve) => subgraph.listen(0, '127.0.0.1', resolve));
  const subgraphUrl = `http://127.0.0.1:${(subgraph.address() as AddressInfo).port}/graphql`;
  const app = express();
  edgeServer = http.createServer(app);
  graph = await startFederatedGraph({
    supergraphSdl: readSupergraph(),
    subgraphUrls: { membership: subgraphUrl, marketplace: subgraphUrl, inference: subgraphUrl, traceroute: subgraphUrl },
    internalSecret: SECRET,
    logger: pino({ level: 'silent' }),
    introspection: false,
    subgraphQueryDeduplication: false,
    jsonMaxDepth: 64,
    httpServer: edgeServer,
  });
  const contextOf = () => ({ principal: alice, requestId: 'req_test' });
  const apollo = apolloMiddleware(graph.apollo, { context: async ({ req }) => contextFor(req, contextOf) });
  app.use(
    '/graphql',
    express.json(),
    acceptedOperations(graph.passthrough, contextOf, (req, res) => {
      throughApollo += 1;
      return apollo(req, res);
    }),
  );
  await new Promise<void>((resolve) => edgeServer.listen(0, '127.0.0.1', resolve));
  edgeUrl = `http://127.0.0.1:${(edgeServer.address() as AddressInfo).port}/graphql`;
});
afterAll(async () => {
  await graph.apollo.stop();
  if (subgraph.listening) await new Promise((resolve) => subgraph.close(resolve));
});
beforeEach(() => {
  fetched.length = 0;
  throughApollo = 0;
});

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(edgeUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

describe("/graphql's short way for texts Apollo accepted as one fetch", () => {
  it('answers a text seen before without Apollo, with the same status, type and body text', async () => {
    const body = { query: 'query Find($id: ID!) { member(id: $id) { id name } }', variables: { id: 'a' } };
    const first = await post(body);
    expect(throughApollo).toBe(1);
    const second = await post(body);
    const third = await post(body, { accept: 'application/json' });
    expect(throughApollo).toBe(1);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(first).toEqual({ status: 200, type: 'application/json; charset=utf-8', text: '{"data":{"member":{"id":"a","name":"Ada"}}}\n' });
    expect(fetched).toHaveLength(3);
  });

  it('leaves variables that do not coerce to Apollo, which refuses them without a fetch', async () => {
    const query = 'query Coerce($id: ID!) { member(id: $id) { id name } }';
    await post({ query, variables: { id: 'a' } });
    fetched.length = 0;
    const refused = await post({ query, variables: { id: { not: 'an id' } } });
    expect(refused.status).toBe(400);
    expect(JSON.parse(refused.text).errors[0].message).toMatch(/\$id/);
    expect(fetched).toEqual([]);
  });

  it('hands an answer with errors to Apollo, which completes it as the gateway does without fetching again', async () => {
    const body = { query: '{ member(id: "a") { id phone } }' };
    const first = await post(body);
    const second = await post(body);
    expect(second).toEqual(first);
    expect(JSON.parse(second.text)).toMatchObject({ data: { member: { id: 'a', phone: null } }, errors: [{ message: 'phone failed', path: ['member', 'phone'] }] });
    expect(fetched).toHaveLength(2);
    expect(throughApollo).toBe(2);
  });

  it('leaves other Accept headers, extensions and unknown texts to Apollo', async () => {
    const query = '{ member(id: "a") { name } }';
    await post({ query });
    const graphqlResponse = await post({ query }, { accept: 'application/graphql-response+json' });
    expect(graphqlResponse.type).toBe('application/graphql-response+json; charset=utf-8');
    await post({ query, extensions: {} });
    // An empty operation name names no operation: Apollo refuses it, as it did before the text was known.
    expect((await post({ query, operationName: '' })).status).toBe(400);
    await post({ query: '{ member(id: "b") { name } }' });
    expect(throughApollo).toBe(5);
    expect(fetched).toHaveLength(4);
  });

  it('answers a subgraph that cannot be reached as Apollo does, with one attempt per request', async () => {
    const known = { query: '{ member(id: "a") { id name } }' };
    await post(known);
    subgraph.closeAllConnections();
    await new Promise((resolve) => subgraph.close(resolve));
    const throughApolloBefore = throughApollo;
    const viaApollo = await post({ query: '{ member(id: "c") { id name } }' });
    const viaShortWay = await post(known);
    expect(throughApollo - throughApolloBefore).toBe(2);
    expect(viaShortWay.status).toBe(viaApollo.status);
    expect(JSON.parse(viaShortWay.text)).toEqual(JSON.parse(viaApollo.text));
    expect(JSON.parse(viaShortWay.text)).toMatchObject({ data: { member: null }, errors: [{ extensions: { code: 'SERVICE_UNAVAILABLE' } }] });
  });
});
