import { UNAVAILABLE_MESSAGE } from '../../edge/federation/signing-data-source.js';
import { createClient } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRINCIPAL_HEADER, signPrincipal } from '../../core/principal.js';
import { createLogger } from '../../core/logger.js';
import { openIdentityStore } from '../../identity/index.js';
import { startEdgeService } from '../../platform/platform.js';
import { freePort } from '../support/free-port.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';
import { probeUntil } from '../support/subscription-probe.js';
import { principalFor, TEST_SECRET } from '../support/subgraph-harness.js';

// A failure that is not the client's doing (here a real database error: a text column turned
// integer, so PostgreSQL's message quotes the value sent) must not show its SQL or values over /graphql or REST, nor from a subgraph itself;
// the client gets the request id, and the log has the original under that id.

let platform: TestPlatform;
let db: pg.Client;
let key: string;
let memberId: string;
const logLines: Record<string, unknown>[] = [];
const SECRET = 'Secret-Label-8814';

beforeAll(async () => {
  platform = await startTestPlatform({}, { level: 'error', destination: { write: (line: string) => void logLines.push(JSON.parse(line)) } });
  key = await platform.issueKey('acct-error-masking');
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  const created = await platform.request('/api/v1/members', { method: 'POST', key, json: { name: 'Ada', email: 'ada@example.org' } });
  memberId = ((await created.json()) as { id: string }).id;
  // Every test here runs against the broken column; the database is this file's own.
  await db.query('alter table "membership"."invoice" alter column "description" type integer using null');
});

afterAll(async () => {
  await db?.end();
  await platform?.close();
});

const CREATE = `mutation ($memberId: ID!, $description: String) {
  createInvoice(memberId: $memberId, currency: "EUR", lines: [{ description: "x", unitAmount: 100 }], description: $description) { id }
}`;

function expectNothingInternal(text: string): void {
  for (const leak of [SECRET, 'insert into', 'invalid input syntax', 'integer', '"membership"', memberId]) {
    expect(text, `the response shows ${leak}`).not.toContain(leak);
  }
}

function loggedOriginal(requestId: string, service: string): Record<string, unknown> | undefined {
  return logLines.find((line) => line.requestId === requestId && line.service === service && JSON.stringify(line.err ?? '').includes(`invalid input syntax for type integer: \\"${SECRET}\\"`));
}

/** Runs a GraphQL operation with `key` through the platform's edge and expects no error. */
async function gql(query: string, variables: Record<string, unknown>): Promise<any> {
  const response = await platform.request('/graphql', { method: 'POST', key, json: { query, variables } });
  const body = (await response.json()) as { data: any; errors?: unknown[] };
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
}

/** Two members of `key`'s account and a private channel between them, made over /graphql. */
async function channelOfTwo(names: [string, string], channelName: string): Promise<{ sender: string; subscriber: string; channel: string }> {
  const member = async (name: string) => (await gql('mutation($n: String!, $e: String!) { createMember(name: $n, email: $e) { id } }', { n: name, e: `${name}@example.org` })).createMember.id as string;
  const [sender, subscriber] = [await member(names[0]), await member(names[1])];
  const channel = (await gql('mutation($a: ID!, $m: [ID!], $n: String!) { createChatChannel(asMember: $a, name: $n, private: true, memberIds: $m) { id } }', { a: sender, m: [subscriber], n: channelName }))
    .createChatChannel.id as string;
  return { sender, subscriber, channel };
}

describe('errors that are not domain errors', () => {
  it('reach a /graphql client as a generic message with the request id, the original only in the log', async () => {
    const response = await platform.request('/graphql', { method: 'POST', key, json: { query: CREATE, variables: { memberId, description: SECRET } } });
    const requestId = response.headers.get('x-request-id')!;
    const text = await response.text();
    expectNothingInternal(text);
    const body = JSON.parse(text) as { data: unknown; errors: { message: string; extensions: Record<string, unknown> }[] };
    expect(body.errors).toEqual([
      expect.objectContaining({
        message: `Internal server error (request ${requestId})`,
        extensions: { code: 'INTERNAL_SERVER_ERROR', requestId },
      }),
    ]);
    const original = loggedOriginal(requestId, 'membership');
    expect(original, JSON.stringify(logLines)).toBeDefined();
    expect(JSON.stringify(original)).toContain(SECRET);
  });

  it('reach a REST client as a 500 with the request id and nothing of the original', async () => {
    const response = await platform.request('/api/v1/invoices', {
      method: 'POST',
      key,
      json: { memberId, currency: 'EUR', lines: [{ description: 'x', unitAmount: 100 }], description: SECRET },
    });
    const requestId = response.headers.get('x-request-id')!;
    const text = await response.text();
    expect(response.status, text).toBe(500);
    expectNothingInternal(text);
    expect(JSON.parse(text).error).toMatchObject({ code: 'internal_error', request_id: requestId });
    expect(loggedOriginal(requestId, 'membership')).toBeDefined();
  });

  it('leave a subgraph masked already, under the request id the edge forwarded', async () => {
    const principal = principalFor();
    const direct = (query: string, variables: Record<string, unknown>) =>
      fetch(platform.subgraphUrls.membership, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'req_forwarded_1', [PRINCIPAL_HEADER]: signPrincipal(principal, TEST_SECRET) },
        body: JSON.stringify({ query, variables }),
      });
    const member = await (await direct('mutation { createMember(name: "Bo", email: "bo@example.org") { id } }', {})).json();
    const response = await direct(CREATE, { memberId: member.data.createMember.id, description: SECRET });
    const text = await response.text();
    expectNothingInternal(text);
    expect(JSON.parse(text).errors[0]).toMatchObject({
      message: 'Internal server error (request req_forwarded_1)',
      extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'req_forwarded_1' },
    });
    expect(loggedOriginal('req_forwarded_1', 'membership')).toBeDefined();
  });

  it("answer a subgraph it cannot reach as SERVICE_UNAVAILABLE, its address only in the log", async () => {
    const closedPort = await freePort();
    const identityOrm = await openIdentityStore(platform.databaseUrl);
    const logger = createLogger('error', 'platform', { write: (line: string) => void logLines.push(JSON.parse(line)) });
    const edge = await startEdgeService(testConfig(), identityOrm, { ...platform.subgraphUrls, membership: `http://127.0.0.1:${closedPort}/graphql` }, logger);
    try {
      const response = await fetch(edge.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: '{ invoices { data { id } } }' }),
      });
      const requestId = response.headers.get('x-request-id')!;
      const text = await response.text();
      for (const leak of [String(closedPort), '127.0.0.1', 'ECONNREFUSED', 'fetch']) expect(text, `the response shows ${leak}`).not.toContain(leak);
      // Down, not broken: a client may retry (503 on REST), and the request id finds the address in the log.
      expect(JSON.parse(text).errors[0]).toMatchObject({ message: UNAVAILABLE_MESSAGE, extensions: { code: 'SERVICE_UNAVAILABLE', requestId } });
      const original = logLines.find((line) => line.requestId === requestId && line.service === 'gateway');
      expect(JSON.stringify(original)).toContain(String(closedPort));
    } finally {
      await edge.stop();
      await identityOrm.close(true);
    }
  });

  it("mask the gateway's failures while it resolves a subscription event's fields from another subgraph", async () => {
    const { sender: ann, subscriber: bob, channel } = await channelOfTwo(['ann', 'bob'], 'masking');

    // A second edge whose marketplace is a closed port: each event's jobPostings fetch fails at the edge.
    const closedPort = await freePort();
    const identityOrm = await openIdentityStore(platform.databaseUrl);
    const logger = createLogger('error', 'platform', { write: (line: string) => void logLines.push(JSON.parse(line)) });
    const edge = await startEdgeService(testConfig(), identityOrm, { ...platform.subgraphUrls, marketplace: `http://127.0.0.1:${closedPort}/graphql` }, logger);
    const client = createClient({ url: edge.url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${key}` }, retryAttempts: 0 });
    const results: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] }[] = [];
    const iterator = client.iterate({
      query: 'subscription($me: ID!, $c: ID!) { messageAdded(asMember: $me, channelId: $c) { text sender { name jobPostings { title } } } }',
      variables: { me: bob, c: channel },
    });
    const done = (async () => {
      for await (const result of iterator) results.push(result as (typeof results)[number]);
    })();
    try {
      await probeUntil(
        () => results.length > 0,
        (attempt) => gql('mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: ann, c: channel, t: `probe ${attempt}` }),
        'an event through the edge',
      );
      const text = JSON.stringify(results[0]);
      for (const leak of [String(closedPort), '127.0.0.1', 'ECONNREFUSED', 'marketplace']) expect(text, `the event shows ${leak}`).not.toContain(leak);
      const error = results[0].errors?.[0];
      expect(error?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      const requestId = String(error?.extensions?.requestId);
      expect(error?.message).toBe(UNAVAILABLE_MESSAGE);
      const original = logLines.find((line) => line.requestId === requestId && JSON.stringify(line.err ?? '').includes(String(closedPort)));
      expect(original, 'the original error is logged under the request id').toBeDefined();
    } finally {
      await iterator.return?.();
      await client.dispose();
      await done.catch(() => undefined);
      await edge.stop();
      await identityOrm.close(true);
    }
  });

  it("reach a subscriber masked once, by the subgraph that failed, under the edge's request id for the operation", async () => {
    const { sender: cy, subscriber: di, channel } = await channelOfTwo(['cy', 'di'], 'masked-in-subgraph');
    // Each event's revisions are read in the membership subgraph, from a column that is gone.
    await db.query('alter table "membership"."chat_message_revision" rename column "message_id" to "message_id_gone"');

    const client = createClient({ url: platform.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${key}` }, retryAttempts: 0 });
    const results: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] }[] = [];
    const iterator = client.iterate({
      query: 'subscription($me: ID!, $c: ID!) { messageAdded(asMember: $me, channelId: $c) { text revisions { text } } }',
      variables: { me: di, c: channel },
    });
    const done = (async () => {
      for await (const result of iterator) results.push(result as (typeof results)[number]);
    })();
    try {
      await probeUntil(
        () => results.length > 0,
        (attempt) => gql('mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: cy, c: channel, t: `probe ${attempt}` }),
        'an event through the edge',
      );
      const text = JSON.stringify(results[0]);
      for (const leak of ['message_id_gone', 'does not exist', 'select', '"membership"']) expect(text, `the event shows ${leak}`).not.toContain(leak);
      const error = results[0].errors?.[0];
      expect(error?.extensions?.code, text).toBe('INTERNAL_SERVER_ERROR');
      const requestId = String(error?.extensions?.requestId);
      expect(requestId).toMatch(/^ws_/);
      expect(error?.message).toBe(`Internal server error (request ${requestId})`);
      const original = logLines.find((line) => line.requestId === requestId && line.service === 'membership' && JSON.stringify(line.err ?? '').includes('message_id does not exist'));
      expect(original, `the original error is logged under ${requestId}: ${JSON.stringify(logLines.slice(-4))}`).toBeDefined();
      const maskings = logLines.filter((line) => line.requestId === requestId && String(line.msg).startsWith('internal error'));
      expect(maskings, 'one log line per masked error').toHaveLength(1);
    } finally {
      await iterator.return?.();
      await client.dispose();
      await done.catch(() => undefined);
      await db.query('alter table "membership"."chat_message_revision" rename column "message_id_gone" to "message_id"');
    }
  });

  it('log an error a subgraph masked once: the edge passes it on as it is', async () => {
    const response = await platform.request('/graphql', { method: 'POST', key, json: { query: CREATE, variables: { memberId, description: SECRET } } });
    const requestId = response.headers.get('x-request-id')!;
    expect((await response.json()).errors[0].extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR', requestId });
    const maskings = logLines.filter((line) => line.requestId === requestId && String(line.msg).startsWith('internal error'));
    expect(maskings.map((line) => line.service)).toEqual(['membership']);
  });

  it('keep the messages of domain and validation errors', async () => {
    const notFound = await (await platform.request('/graphql', { method: 'POST', key, json: { query: CREATE, variables: { memberId: '00000000-0000-4000-8000-000000000000' } } })).json();
    expect(notFound.errors[0]).toMatchObject({ message: expect.stringContaining('No member with id'), extensions: { code: 'NOT_FOUND' } });
    const invalid = await (await platform.request('/graphql', { method: 'POST', key, json: { query: '{ invoices { nope } }' } })).json();
    expect(invalid.errors[0]).toMatchObject({ message: expect.stringContaining('nope'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
    const coercion = await (await platform.request('/graphql', { method: 'POST', key, json: { query: CREATE, variables: { memberId: { not: "an id" } } } })).json();
    expect(coercion.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});
