import { createClient, type Client } from 'graphql-ws';
import type { GraphQLFormattedError } from 'graphql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../core/logger.js';
import { openIdentityStore } from '../../identity/index.js';
import { startEdgeService } from '../../platform/platform.js';
import { UNAVAILABLE_MESSAGE } from '../../edge/federation/signing-data-source.js';
import { freePort } from '../support/free-port.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';
import { probeUntil } from '../support/subscription-probe.js';

/**
 * A chat client keeps one graphql-ws socket for everything. An operation on it that fails, of
 * whatever class, is answered on that operation's id, as the protocol says (refused before it runs:
 * an `error` message; failed while it ran: `next` with errors, then `complete`), with the
 * extensions /graphql gives over HTTP; the socket stays open and the subscriptions beside it
 * keep delivering.
 */

/** Operations per minute of a text key: low, so that one socket reaches the limit. */
const INFERENCE_PER_MINUTE = 5;

let platform: TestPlatform;
let db: pg.Client;
let live: string;
let admin: string;
const clients: Client[] = [];
const stops: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  platform = await startTestPlatform({ rateLimits: { ...testConfig().rateLimits, inferencePerMinute: INFERENCE_PER_MINUTE } });
  live = await platform.issueKey('ws-errors', 'live');
  admin = await platform.issueKey('ws-errors-ops', 'admin');
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  for (const client of clients) await client.dispose();
  for (const stop of stops) await stop();
  await db?.end();
  await platform?.close();
});

type Extensions = Record<string, unknown>;
type Result = { data?: Record<string, unknown> | null; errors?: GraphQLFormattedError[] };
/** What the socket answered for one operation: its `next` results, its `error` message's errors, whether it completed. */
interface Answer {
  next: Result[];
  error?: readonly GraphQLFormattedError[];
  complete: boolean;
}

/** A graphql-ws client of `url` with `key`, and how its socket closed if it did. */
function socket(key: string, url = platform.graphqlUrl) {
  const state: { closed?: { code: number; reason: string } } = {};
  const client = createClient({
    url: url.replace(/^http/, 'ws'),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${key}` },
    retryAttempts: 0,
    on: { closed: (event) => (state.closed = { code: (event as CloseEvent).code, reason: (event as CloseEvent).reason }) },
  });
  clients.push(client);
  return { client, state };
}

/** Runs one operation over the socket and gathers its answer; rejects if the socket closes meanwhile. */
function answer(client: Client, query: string, variables: Record<string, unknown> = {}): Promise<Answer> {
  const answered: Answer = { next: [], complete: false };
  return new Promise((resolve, reject) =>
    client.subscribe(
      { query, variables },
      {
        next: (result) => void answered.next.push(result as Result),
        // An `error` message's payload is an array of errors; anything else is the socket closing.
        error: (error) => (Array.isArray(error) ? resolve({ ...answered, error }) : reject(new Error(`the socket closed: ${(error as CloseEvent).code} ${(error as CloseEvent).reason}`))),
        complete: () => resolve({ ...answered, complete: true }),
      },
    ),
  );
}

/** The same operation over HTTP /graphql: the errors a client gets there. */
async function overHttp(key: string, query: string, variables: Record<string, unknown> = {}, base = platform.baseUrl): Promise<GraphQLFormattedError[]> {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as Result;
  expect(body.errors, `HTTP answered ${JSON.stringify(body)}`).toBeDefined();
  return body.errors!;
}

/** The extensions a client may compare: a request id is the operation's own, so only whether there is one. */
function comparable(extensions: Extensions | undefined): Extensions {
  const { requestId, ...rest } = extensions ?? {};
  return { ...rest, ...(requestId === undefined ? {} : { requestId: expect.any(String) }) };
}

async function gql(key: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const response = await platform.request('/graphql', { method: 'POST', key, json: { query, variables } });
  const body = (await response.json()) as Result;
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
}

/**
 * A chat subscription on `client`: Bob listening on a channel Ann writes to over HTTP. `delivers()`
 * sends a new message and waits until it arrives on this subscription.
 */
async function chatBeside(client: Client, label: string) {
  const member = async (name: string) =>
    (await gql(live, 'mutation($n: String!, $e: String!) { createMember(name: $n, email: $e) { id } }', { n: name, e: `${name}-${label}@example.org` })).createMember.id as string;
  const [ann, bob] = [await member('ann'), await member('bob')];
  const channel = (await gql(live, 'mutation($a: ID!, $m: [ID!], $n: String!) { createChatChannel(asMember: $a, name: $n, private: true, memberIds: $m) { id } }', { a: ann, m: [bob], n: label }))
    .createChatChannel.id as string;
  const texts: string[] = [];
  const ended: { error?: unknown; complete?: boolean } = {};
  client.subscribe(
    { query: 'subscription($me: ID!, $c: ID!) { messageAdded(asMember: $me, channelId: $c) { text } }', variables: { me: bob, c: channel } },
    {
      next: (result) => void texts.push((result.data as { messageAdded: { text: string } }).messageAdded.text),
      error: (error) => (ended.error = error),
      complete: () => (ended.complete = true),
    },
  );
  let sent = 0;
  const delivers = async () => {
    const text = `${label}-${++sent}`;
    await probeUntil(
      () => texts.includes(text),
      () => gql(live, 'mutation($a: ID!, $c: ID!, $t: String!) { sendChatMessage(asMember: $a, mode: CHANNEL, channelId: $c, text: $t) { id } }', { a: ann, c: channel, t: text }),
      `message ${text} on the subscription beside`,
    );
    expect(ended).toEqual({});
  };
  await delivers();
  return { delivers, ann };
}

/** A provider status subscription on `client` (a text key's); `delivers()` changes the status over HTTP and waits for it. */
async function providerBeside(client: Client) {
  const statuses: string[] = [];
  const ended: { error?: unknown; complete?: boolean } = {};
  client.subscribe(
    { query: 'subscription { providerStatusChanged(id: "provider_b") { status } }' },
    {
      next: (result) => void statuses.push((result.data as { providerStatusChanged: { status: string } }).providerStatusChanged.status),
      error: (error) => (ended.error = error),
      complete: () => (ended.complete = true),
    },
  );
  const delivers = async () => {
    const before = statuses.length;
    await probeUntil(
      () => statuses.length > before,
      () => gql(admin, 'mutation { setProviderStatus(id: "provider_b", status: OPERATIONAL) { id } }'),
      'a status change on the subscription beside',
    );
    expect(ended).toEqual({});
  };
  await delivers();
  return { delivers };
}

/** An answer that failed while running: `next` with errors (and the data beside them), then `complete`. */
function failedWhileRunning(got: Answer): GraphQLFormattedError[] {
  expect(got.error, JSON.stringify(got)).toBeUndefined();
  expect(got.complete).toBe(true);
  expect(got.next).toHaveLength(1);
  expect(got.next[0].errors?.length, JSON.stringify(got)).toBeGreaterThan(0);
  return got.next[0].errors!;
}

/** An answer refused before it ran: one `error` message, nothing else. */
function refusedBeforeRunning(got: Answer): readonly GraphQLFormattedError[] {
  expect(got.next, JSON.stringify(got)).toEqual([]);
  expect(got.error?.length, JSON.stringify(got)).toBeGreaterThan(0);
  return got.error!;
}

describe('errors answered over a graphql-ws socket', () => {
  let chat: { client: Client; state: { closed?: unknown }; delivers: () => Promise<void>; ann: string };

  beforeAll(async () => {
    const { client, state } = socket(live);
    chat = { client, state, ...(await chatBeside(client, 'errors')) };
  });

  it('validation: an unknown field and a variable of the wrong type, as an error message with the codes HTTP gives', async () => {
    const unknownField = '{ members { nope } }';
    const refused = refusedBeforeRunning(await answer(chat.client, unknownField));
    expect(refused[0].message).toContain('nope');
    expect(refused[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(refused.map((error) => comparable(error.extensions))).toEqual((await overHttp(live, unknownField)).map((error) => comparable(error.extensions)));
    expect(chat.state.closed).toBeUndefined();
    await chat.delivers();

    const badVariable = 'mutation($e: String!) { createMember(name: "Vi", email: $e) { id } }';
    const coerced = refusedBeforeRunning(await answer(chat.client, badVariable, { e: { not: 'a string' } }));
    expect(coerced[0].message).toContain('$e');
    expect(coerced[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(coerced.map((error) => comparable(error.extensions))).toEqual((await overHttp(live, badVariable, { e: { not: 'a string' } })).map((error) => comparable(error.extensions)));
    expect(chat.state.closed).toBeUndefined();
    await chat.delivers();

    const twoOperations = 'query A { members { data { id } } } query B { invoices { data { id } } }';
    const unresolved = refusedBeforeRunning(await answer(chat.client, twoOperations));
    expect(unresolved[0].extensions?.code).toBe('OPERATION_RESOLUTION_FAILURE');
    expect(unresolved.map(({ message, extensions }) => ({ message, extensions: comparable(extensions) }))).toEqual(
      (await overHttp(live, twoOperations)).map(({ message, extensions }) => ({ message, extensions: comparable(extensions) })),
    );
    expect(chat.state.closed).toBeUndefined();
    await chat.delivers();
  });

  it('BAD_USER_INPUT: a mutation with an invalid email, as next with errors, then complete', async () => {
    const query = 'mutation { createMember(name: "Eve", email: "not-an-email") { id } }';
    const errors = failedWhileRunning(await answer(chat.client, query));
    expect(errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'email' });
    expect(errors.map((error) => comparable(error.extensions))).toEqual((await overHttp(live, query)).map((error) => comparable(error.extensions)));
    expect(chat.state.closed).toBeUndefined();
    await chat.delivers();
  });

  it('NOT_FOUND: renewMember of an unknown id, and a subscription to an unknown job application', async () => {
    const query = 'mutation { renewMember(id: "00000000-0000-4000-8000-00000000dead") { id } }';
    const errors = failedWhileRunning(await answer(chat.client, query));
    expect(errors[0]).toMatchObject({ path: ['renewMember'], extensions: { code: 'NOT_FOUND' } });
    expect(errors.map((error) => comparable(error.extensions))).toEqual((await overHttp(live, query)).map((error) => comparable(error.extensions)));
    expect(chat.state.closed).toBeUndefined();
    await chat.delivers();

    const subscription = 'subscription { jobApplicationStatusChanged(applicationId: "00000000-0000-4000-8000-00000000dead") { id } }';
    const refused = failedWhileRunning(await answer(chat.client, subscription));
    expect(refused[0]).toMatchObject({ message: expect.stringContaining('No job_application'), extensions: { code: 'NOT_FOUND', reason: 'job_application_not_found' } });
    expect(chat.state.closed).toBeUndefined();
    await chat.delivers();
  });

  it('FORBIDDEN: a text key asking for members, beside its own subscription', async () => {
    const text = await platform.issueKey('ws-errors-text', 'text');
    const { client, state } = socket(text);
    const beside = await providerBeside(client);
    const query = '{ members { data { id } } }';
    const errors = failedWhileRunning(await answer(client, query));
    expect(errors[0]).toMatchObject({ path: ['members'], extensions: { code: 'FORBIDDEN' } });
    expect(errors.map((error) => comparable(error.extensions))).toEqual((await overHttp(text, query)).map((error) => comparable(error.extensions)));
    expect(state.closed).toBeUndefined();
    await beside.delivers();
  });

  it('RATE_LIMITED: operations past the key’s limit, as an error message with the code and reason of HTTP’s 429', async () => {
    const text = await platform.issueKey('ws-errors-limited', 'text');
    const { client, state } = socket(text);
    const beside = await providerBeside(client);
    // The subscription counted once; queries run until the window is used up.
    let refused: readonly GraphQLFormattedError[] | undefined;
    for (let operation = 1; operation <= INFERENCE_PER_MINUTE && !refused; operation++) {
      const got = await answer(client, '{ providers { id } }');
      if (got.error) refused = refusedBeforeRunning(got);
      else expect(got.next[0].errors).toBeUndefined();
    }
    expect(refused, 'an operation past the limit was refused').toBeDefined();
    expect(refused![0].extensions).toEqual({ code: 'RATE_LIMITED', reason: 'rate_limit_exceeded' });
    expect(refused!.map((error) => comparable(error.extensions))).toEqual((await overHttp(text, '{ providers { id } }')).map((error) => comparable(error.extensions)));
    expect(state.closed).toBeUndefined();
    await beside.delivers();
  });

  it('INTERNAL_SERVER_ERROR: a database error, masked with the operation’s request id', async () => {
    const memberId = (await gql(live, 'mutation { createMember(name: "Ivo", email: "ivo@example.org") { id } }')).createMember.id as string;
    const query = `mutation($m: ID!, $d: String) { createInvoice(memberId: $m, currency: "EUR", lines: [{ description: "x", unitAmount: 100 }], description: $d) { id } }`;
    // A real failure the client did not cause: the column the description goes to no longer takes text.
    await db.query('alter table "membership"."invoice" alter column "description" type integer using null');
    try {
      const errors = failedWhileRunning(await answer(chat.client, query, { m: memberId, d: 'Secret-Label-31' }));
      const requestId = String(errors[0].extensions?.requestId);
      expect(requestId).toMatch(/^ws_/);
      expect(errors[0]).toMatchObject({ message: `Internal server error (request ${requestId})`, extensions: { code: 'INTERNAL_SERVER_ERROR', requestId } });
      expect(JSON.stringify(errors)).not.toMatch(/Secret-Label|integer|invoice/);
      expect(errors.map((error) => comparable(error.extensions))).toEqual((await overHttp(live, query, { m: memberId, d: 'Secret-Label-31' })).map((error) => comparable(error.extensions)));
    } finally {
      await db.query('alter table "membership"."invoice" alter column "description" type text');
    }
    expect(chat.state.closed).toBeUndefined();
    await chat.delivers();
  });

  it('SERVICE_UNAVAILABLE: a field of a subgraph that is down, beside the data of one that is up', async () => {
    // A second edge whose marketplace is a closed port; the chat subscription runs through it too.
    const closedPort = await freePort();
    const identityOrm = await openIdentityStore(platform.databaseUrl);
    const edge = await startEdgeService(testConfig(), identityOrm, { ...platform.subgraphUrls, marketplace: `http://127.0.0.1:${closedPort}/graphql` }, createLogger('silent', 'platform'));
    stops.push(edge.stop, () => identityOrm.close(true));
    const { client, state } = socket(live, edge.url);
    const beside = await chatBeside(client, 'down');
    const query = '{ members(limit: 1) { data { id } } jobPosting(id: "00000000-0000-7000-8000-000000000000") { id } }';
    const got = await answer(client, query);
    const errors = failedWhileRunning(got);
    expect(got.next[0].data).toEqual({ members: { data: expect.any(Array) }, jobPosting: null });
    expect(errors[0]).toMatchObject({ message: UNAVAILABLE_MESSAGE, extensions: { code: 'SERVICE_UNAVAILABLE', requestId: expect.stringMatching(/^ws_/) } });
    expect(JSON.stringify(errors)).not.toContain(String(closedPort));
    expect(errors.map((error) => comparable(error.extensions))).toEqual((await overHttp(live, query, {}, edge.url.replace(/\/graphql$/, ''))).map((error) => comparable(error.extensions)));
    expect(state.closed).toBeUndefined();
    await beside.delivers();

    // A subscription whose subgraph is down: events passed through as they come, and events completed by the plan.
    for (const selection of ['id', 'id member { name }']) {
      const refused = failedWhileRunning(await answer(client, `subscription($m: ID) { jobApplicationStatusChanged(memberId: $m) { ${selection} } }`, { m: beside.ann }));
      expect(refused[0]).toMatchObject({ message: UNAVAILABLE_MESSAGE, extensions: { code: 'SERVICE_UNAVAILABLE', reason: 'service_unavailable', requestId: expect.stringMatching(/^ws_/) } });
      expect(JSON.stringify(refused)).not.toContain(String(closedPort));
      expect(state.closed).toBeUndefined();
      await beside.delivers();
    }
  });

});
