import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/logger.js';
import { DomainError } from '../../core/errors.js';
import { KEY_STORE_PATH, signInternalRequest, type KeyStore } from '../../core/key-store.js';
import { openIdentityStore } from '../../identity/index.js';
import { LocalKeyStore } from '../../identity/local-key-store.js';
import { InternalNonces } from '../../identity/internal-nonces.js';
import { startEdgeService } from '../../platform/edge-service.js';
import type { RunningService } from '../../core/listen.js';
import { KeyStoreClient } from '../../subgraphs/shared/key-store.client.js';
import { freePort } from '../support/free-port.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';
import { spawnService, TSX, type ServiceProcess } from '../support/service-process.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';

// The edge owns the keys (schema `identity`); a subgraph running apart manages them only through
// the edge's internal endpoint. These tests speak to that endpoint as an attacker and as the
// subgraphs' client would, and run a membership subgraph in a process of its own against it.

const CAP = 3;
const ANONYMOUS_PER_MINUTE = 3;

let platform: TestPlatform;
let identityOrm: MikroORM;
let local: KeyStore;
let client: KeyStoreClient;

beforeAll(async () => {
  const config = testConfig();
  platform = await startTestPlatform({ maxActiveKeysPerAccount: CAP, rateLimits: { ...config.rateLimits, anonymousPerMinute: ANONYMOUS_PER_MINUTE } });
  identityOrm = await openIdentityStore(platform.databaseUrl);
  local = new LocalKeyStore(identityOrm, { maxActiveKeysPerAccount: CAP });
  client = new KeyStoreClient(platform.baseUrl, TEST_SECRET);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await identityOrm?.close(true);
  await platform?.close();
});

let accounts = 0;
const newAccount = () => `iks-${process.pid}-${++accounts}`;

/** A call to the endpoint as raw HTTP, signed with `secret` at `now` over `signedBody` (the body sent unless given), or with `signature`'s headers as they are. */
function post(operation: string, body: string, options: { secret?: string; now?: number; signedBody?: string; headers?: Record<string, string>; signature?: Record<string, string> } = {}) {
  const urlPath = `${KEY_STORE_PATH}/${operation}`;
  const signature =
    options.signature ?? (options.secret === undefined && options.headers ? {} : signInternalRequest(options.secret ?? TEST_SECRET, 'POST', urlPath, options.signedBody ?? body, options.now));
  return fetch(platform.baseUrl + urlPath, { method: 'POST', headers: { 'content-type': 'application/json', ...signature, ...options.headers }, body });
}

async function errorOf(response: Response) {
  return ((await response.json()) as { error: { code: string; message: string; extensions: Record<string, unknown> } }).error;
}

/** What a rejected promise rejected with, as a client would see it: its class, message and extensions. */
async function failureOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, 'the call should have failed').toBeInstanceOf(DomainError);
  const { message, extensions } = error as DomainError;
  return { message, extensions: { ...extensions } };
}

describe('the edge\'s internal key store endpoint', () => {
  it('answers a call signed with INTERNAL_SECRET', async () => {
    const account = newAccount();
    await local.createKey({ account, kind: 'live' });
    const response = await post('listKeys', JSON.stringify({ account }));
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as { result: { account: string; kind: string }[] };
    expect(result).toEqual([expect.objectContaining({ account, kind: 'live' })]);
    expect(JSON.stringify(result)).not.toContain('secret');
  });

  it('refuses an unsigned call with 401 before reading it', async () => {
    const response = await fetch(`${platform.baseUrl}${KEY_STORE_PATH}/listKeys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
    expect((await errorOf(response)).code).toBe('UNAUTHENTICATED');
  });

  it('refuses a call signed with another secret, or whose body is not the one signed, with 401', async () => {
    const forged = await post('createKey', JSON.stringify({ account: newAccount(), kind: 'admin' }), { secret: 'not-the-internal-secret' });
    expect(forged.status).toBe(401);
    expect(await errorOf(forged)).toMatchObject({ code: 'UNAUTHENTICATED', message: 'The request signature is invalid' });
    const account = newAccount();
    const tampered = await post('createKey', JSON.stringify({ account, kind: 'admin' }), { signedBody: JSON.stringify({ account, kind: 'test' }) });
    expect(tampered.status).toBe(401);
    const garbage = await post('listKeys', '{}', { headers: { 'x-platform-timestamp': String(Math.floor(Date.now() / 1000)), 'x-platform-signature': 'AAAA' } });
    expect(garbage.status).toBe(401);
    // Nothing was issued by the refused calls.
    expect(await local.listKeys({ account })).toEqual([]);
  });

  it('refuses a signature older than five minutes with 401', async () => {
    const stale = await post('listKeys', '{}', { now: Date.now() - 6 * 60_000 });
    expect(stale.status).toBe(401);
    expect(await errorOf(stale)).toMatchObject({ code: 'UNAUTHENTICATED', message: 'The request signature has expired' });
    const early = await post('listKeys', '{}', { now: Date.now() + 6 * 60_000 });
    expect(early.status).toBe(401);
    expect((await post('listKeys', '{}', { now: Date.now() - 4 * 60_000 })).status).toBe(200);
  });

  it('accepts each signed call once: the same call sent again is refused with 401 and does nothing', async () => {
    const account = newAccount();
    const body = JSON.stringify({ account, kind: 'live' });
    const signature = signInternalRequest(TEST_SECRET, 'POST', `${KEY_STORE_PATH}/createKey`, body);
    const first = await post('createKey', body, { signature });
    expect(first.status).toBe(200);
    const replayed = await post('createKey', body, { signature });
    expect(replayed.status).toBe(401);
    expect(await errorOf(replayed)).toMatchObject({ code: 'UNAUTHENTICATED', message: 'The request was already received; each signed call is accepted once' });
    expect(await local.listKeys({ account })).toHaveLength(1);

    // The case the nonce is for: a captured enableKey sent again after the key was disabled.
    const { id } = (await local.listKeys({ account }))[0];
    await local.disableKey(id);
    const enableBody = JSON.stringify({ id });
    const enable = signInternalRequest(TEST_SECRET, 'POST', `${KEY_STORE_PATH}/enableKey`, enableBody);
    expect((await post('enableKey', enableBody, { signature: enable })).status).toBe(200);
    await local.disableKey(id);
    expect((await post('enableKey', enableBody, { signature: enable })).status).toBe(401);
    expect((await local.listKeys({ account }))[0]).toMatchObject({ id, disabledAt: expect.anything() });
  });

  it('refuses a call without a nonce, or whose nonce is not the one signed, with 401', async () => {
    const body = '{}';
    const { 'x-platform-nonce': nonce, ...withoutNonce } = signInternalRequest(TEST_SECRET, 'POST', `${KEY_STORE_PATH}/listKeys`, body);
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const bare = await post('listKeys', body, { signature: withoutNonce });
    expect(bare.status).toBe(401);
    const swapped = await post('listKeys', body, { signature: { ...withoutNonce, 'x-platform-nonce': 'A'.repeat(22) } });
    expect(swapped.status).toBe(401);
    expect(await errorOf(swapped)).toMatchObject({ code: 'UNAUTHENTICATED', message: 'The request signature is invalid' });
  });

  it('keeps the claims in the database, so another edge process refuses the replay too', async () => {
    const [one, other] = [new InternalNonces(identityOrm), new InternalNonces(identityOrm)];
    const nonce = `test-${process.pid}-${Date.now()}`;
    expect(await one.claim(nonce)).toBe(true);
    expect(await other.claim(nonce)).toBe(false);
    expect(await one.claim(nonce)).toBe(false);
  });

  it('refuses bad input with 400 and a code, naming the field', async () => {
    const noDate = await post('expireKey', JSON.stringify({ id: 'key_x' }));
    expect(noDate.status).toBe(400);
    expect(await errorOf(noDate)).toMatchObject({ code: 'BAD_USER_INPUT', extensions: { code: 'BAD_USER_INPUT', param: 'at' } });
    const badKind = await post('listKeys', JSON.stringify({ kind: 'superuser' }));
    expect(badKind.status).toBe(400);
    expect((await errorOf(badKind)).extensions.param).toBe('kind');
    const extra = await post('enableKey', JSON.stringify({ id: 'key_x', account: 'someone' }));
    expect(extra.status).toBe(400);
    const notJson = await post('listKeys', '{"account":');
    expect(notJson.status).toBe(400);
    expect((await errorOf(notJson)).code).toBe('BAD_USER_INPUT');
    const notADate = await post('createKey', JSON.stringify({ account: newAccount(), kind: 'live', expiresAt: 'tomorrow' }));
    expect(notADate.status).toBe(400);
    expect((await errorOf(notADate)).extensions.param).toBe('expiresAt');
  });

  it('answers an unknown operation 404, another method 405, and a large body 413', async () => {
    const unknown = await post('dropKeys', '{}');
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).code).toBe('NOT_FOUND');
    const get = await fetch(`${platform.baseUrl}${KEY_STORE_PATH}/listKeys`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    const large = await post('createKey', JSON.stringify({ account: newAccount(), kind: 'live', name: 'x'.repeat(20_000) }));
    expect(large.status).toBe(413);
    expect((await errorOf(large)).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('is no client interface: signed calls are not rate limited per address and carry no rate-limit headers', async () => {
    const answers = [];
    for (let i = 0; i < ANONYMOUS_PER_MINUTE * 3; i++) answers.push(await post('listKeys', JSON.stringify({ account: 'nobody' })));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    expect(answers.every((a) => a.headers.get('x-ratelimit-limit') === null)).toBe(true);
  });
});

describe('the key store client over a real edge', () => {
  it('creates, lists, disables, enables and expires keys as the key store in process does', async () => {
    const account = newAccount();
    const created = await client.createKey({ account, kind: 'live', name: 'remote' });
    expect(created).toMatchObject({ account, kind: 'live', name: 'remote', livemode: true, disabledAt: null });
    expect(created.secret).toMatch(/^sk_live_/);
    const traceroute = await client.createKey({ account, kind: 'traceroute', hourlyLimit: 50, expiresAt: new Date(Date.now() + 86_400_000) });
    expect(traceroute).toMatchObject({ hourlyLimit: 50, dailyLimit: 2000, expiresAt: expect.any(String) });

    // What the client lists is what the store holds, field for field.
    expect(await client.listKeys({ account })).toEqual(await local.listKeys({ account }));
    expect((await client.listKeys({ account, kind: 'traceroute' })).map((k) => k.id)).toEqual([traceroute.id]);

    expect((await client.disableKey(created.id, account)).disabledAt).not.toBeNull();
    expect((await local.listKeys({ account, kind: 'live' }))[0].disabledAt).not.toBeNull();
    expect((await client.enableKey(created.id)).disabledAt).toBeNull();
    const at = new Date(Date.now() - 1000);
    expect((await client.expireKey(traceroute.id, at)).expiresAt).toBe(at.toISOString());
  });

  it('raises the same errors as in process: NOT_FOUND, another account\'s key, bad input, the key limit', async () => {
    const account = newAccount();
    expect(await failureOf(client.disableKey('key_nonexistent'))).toEqual(await failureOf(local.disableKey('key_nonexistent')));
    expect((await failureOf(client.enableKey('key_nonexistent'))).extensions).toEqual({ code: 'NOT_FOUND', param: 'id' });

    const theirs = await local.createKey({ account: newAccount(), kind: 'live' });
    expect(await failureOf(client.disableKey(theirs.id, account))).toEqual(await failureOf(local.disableKey(theirs.id, account)));

    expect(await failureOf(client.createKey({ account, kind: 'root' }))).toEqual(await failureOf(local.createKey({ account, kind: 'root' })));
    expect(await failureOf(client.createKey({ account: 'Not A Slug', kind: 'live' }))).toEqual(await failureOf(local.createKey({ account: 'Not A Slug', kind: 'live' })));
    const past = new Date(Date.now() - 60_000);
    expect(await failureOf(client.createKey({ account, kind: 'live', expiresAt: past }))).toEqual(await failureOf(local.createKey({ account, kind: 'live', expiresAt: past })));

    for (let i = 0; i < CAP; i++) await client.createKey({ account, kind: i % 2 ? 'test' : 'live' });
    const remote = await failureOf(client.createKey({ account, kind: 'live' }));
    expect(remote.extensions).toEqual({ code: 'CONFLICT', reason: 'key_limit_reached' });
    expect(remote).toEqual(await failureOf(local.createKey({ account, kind: 'live' })));
    expect(await local.listKeys({ account })).toHaveLength(CAP);
  });

  it('says SERVICE_UNAVAILABLE when the edge cannot be reached, and hides a refused secret as internal', async () => {
    const nowhere = new KeyStoreClient(`http://127.0.0.1:${await freePort()}`, TEST_SECRET);
    const wrongSecret = new KeyStoreClient(platform.baseUrl, 'not-the-internal-secret');
    try {
      expect((await failureOf(nowhere.listKeys())).extensions.code).toBe('SERVICE_UNAVAILABLE');
      const refused = await failureOf(wrongSecret.listKeys());
      // INTERNAL_SERVER_ERROR is masked at the subgraph: the client sees a request id, the log sees this.
      expect(refused.extensions.code).toBe('INTERNAL_SERVER_ERROR');
      expect(refused.message).toContain('401');
    } finally {
      await nowhere.close();
      await wrongSecret.close();
    }
  });
});

describe('a membership subgraph in a process of its own', () => {
  let dataDir: string;
  let subgraph: ServiceProcess | undefined;
  let edge: RunningService | undefined;

  afterAll(async () => {
    if (subgraph && subgraph.child.exitCode === null) {
      subgraph.child.kill('SIGTERM');
      await subgraph.exited;
    }
    await edge?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('manages keys end to end through the edge, whose cap applies, and a key it revokes is refused at once', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'internal-key-store-'));
    const membershipPort = await freePort();
    // An edge of its own over that subgraph (the other subgraphs are the test platform's).
    edge = await startEdgeService(
      testConfig({ maxActiveKeysPerAccount: CAP }),
      identityOrm,
      { ...platform.subgraphUrls, membership: `http://127.0.0.1:${membershipPort}/graphql` },
      createLogger('silent'),
    );
    const edgeBase = edge.url.replace(/\/graphql$/, '');
    const { DATABASE_URL: _ignored, ...inherited } = process.env;
    subgraph = spawnService(TSX, ['platform/entries/membership.ts'], {
      ...inherited,
      NODE_ENV: 'development',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      DATABASE_URL: platform.databaseUrl,
      INTERNAL_SECRET: TEST_SECRET,
      MEMBERSHIP_PORT: String(membershipPort),
      EDGE_INTERNAL_URL: edgeBase,
      // The subgraph's own setting does not count: the cap is the key store's, at the edge.
      MAX_ACTIVE_KEYS_PER_ACCOUNT: '100',
    });
    const until = Date.now() + 90_000;
    while (!subgraph.output().includes(' is up at ')) {
      if (subgraph.child.exitCode !== null) throw new Error(`the membership subgraph exited:\n${subgraph.output()}`);
      if (Date.now() > until) throw new Error(`timed out waiting for the membership subgraph:\n${subgraph.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const account = newAccount();
    const owner = await platform.issueKey(account, 'live');
    const graphql = async (key: string, query: string, variables: Record<string, unknown> = {}) => {
      const response = await fetch(edge!.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, body: (await response.json()) as { data?: Record<string, any> | null; errors?: { message: string; extensions: Record<string, unknown> }[] } };
    };

    const created = await graphql(owner, 'mutation { createApiKey(kind: TEST, name: "from apart") { id name secret } }');
    expect(created.body.errors).toBeUndefined();
    const { id, secret } = created.body.data!.createApiKey as { id: string; secret: string };
    expect(secret).toMatch(/^sk_test_/);
    const listed = await graphql(owner, '{ apiKeys { id name kind } }');
    expect(listed.body.data!.apiKeys).toContainEqual({ id, name: 'from apart', kind: 'test' });
    expect(await local.listKeys({ account })).toHaveLength(2);

    // The new key works, and is now in the edge's key cache.
    expect((await graphql(secret, '{ members { data { id } } }')).status).toBe(200);

    // The cap is the edge's (3), not the 100 in the subgraph's environment.
    expect((await graphql(owner, 'mutation { createApiKey(kind: LIVE) { id } }')).body.errors).toBeUndefined();
    const over = await graphql(owner, 'mutation { createApiKey(kind: LIVE) { id } }');
    expect(over.body.errors?.[0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'key_limit_reached' });

    // An unknown id is NOT_FOUND, as in process.
    const unknown = await graphql(owner, 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: 'key_nonexistent' });
    expect(unknown.body.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', param: 'id' });

    const revoked = await graphql(owner, 'mutation($id: ID!) { revokeApiKey(id: $id) { id disabledAt } }', { id });
    expect(revoked.body.errors).toBeUndefined();
    expect(revoked.body.data!.revokeApiKey.disabledAt).toEqual(expect.any(String));
    // Refused at once, although the edge had the key cached a moment ago.
    const refused = await graphql(secret, '{ members { data { id } } }');
    expect(refused.status).toBe(401);
    expect(refused.body.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
    const refusedRest = await fetch(`${edgeBase}/api/v1/members`, { headers: { authorization: `Bearer ${secret}` } });
    expect(refusedRest.status).toBe(401);
    expect(((await refusedRest.json()) as { error: { code: string } }).error.code).toBe('api_key_disabled');
  }, 150_000);
});
