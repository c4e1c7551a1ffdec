import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_DASHBOARD_SETTINGS } from '../../platform/config.js';
import { openIdentityStore } from '../../identity/index.js';
import { createLogger } from '../../core/logger.js';
import { startEdgeService } from '../../platform/platform.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';

const PASSWORD = 'correct horse battery';
const RECHECK_MS = 200;
let platform: TestPlatform;
const clients: Client[] = [];

beforeAll(async () => {
  platform = await startTestPlatform({
    dashboard: { ...DEFAULT_DASHBOARD_SETTINGS, signInPerAddress: 1000 },
    subscriptions: { ...testConfig().subscriptions, keyRecheckMs: RECHECK_MS },
  });
  await platform.createDashboardUser({ account: 'acme', email: 'dev@example.com', password: PASSWORD, role: 'developer' });
  await platform.createDashboardUser({ account: 'acme', email: 'viewer@example.com', password: PASSWORD, role: 'viewer' });
  await platform.createDashboardUser({ account: 'operators', email: 'ops@example.com', password: PASSWORD, platformAdmin: true });
});
afterAll(async () => {
  // graphql-ws's dispose() awaits a connection still being made; one that never settled (seen
  // once in a dozen CI runs: this hook timed out) would hold the hook forever. Each client gets
  // two seconds, then is terminated; the platform's own close is still awaited in full.
  for (const client of clients) {
    await Promise.race([Promise.resolve(client.dispose()).catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 2000))]);
    client.terminate();
  }
  await platform?.close();
});

interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(email: string): Promise<Session> {
  const res = await platform.request('/dashboard/api/session', { method: 'POST', json: { email, password: PASSWORD } });
  expect(res.status).toBe(200);
  return { cookie: res.headers.getSetCookie()[0].split(';')[0], csrf: ((await res.json()) as { csrfToken: string }).csrfToken };
}

type GraphQLBody = { data?: any; errors?: { message: string; extensions: Record<string, unknown> }[] };

async function graphql(session: Session, query: string, options: { kind?: string; csrf?: string | null; variables?: Record<string, unknown> } = {}) {
  const token = options.csrf === null ? undefined : (options.csrf ?? session.csrf);
  const res = await platform.request('/graphql', {
    method: 'POST',
    json: { query, variables: options.variables },
    headers: { cookie: session.cookie, ...(token ? { 'x-csrf-token': token } : {}), ...(options.kind ? { 'x-dashboard-kind': options.kind } : {}) },
  });
  return { status: res.status, body: (await res.json()) as GraphQLBody };
}

const CREATE = 'mutation($kind: MembershipKeyKind!) { createApiKey(kind: $kind, name: "from the dashboard") { id secret kind } }';
const REVOKE = 'mutation($id: ID!) { revokeApiKey(id: $id) { id disabledAt } }';

describe('/graphql with a dashboard session', () => {
  it('a developer creates a live key that works on /api/v1, and after revoking it the key is refused at once', async () => {
    const dev = await signIn('dev@example.com');
    const created = await graphql(dev, CREATE, { variables: { kind: 'LIVE' } });
    expect(created.body.errors).toBeUndefined();
    const { id, secret } = created.body.data.createApiKey;
    expect(secret).toMatch(/^sk_live_/);
    expect((await platform.request('/api/v1/members', { key: secret })).status).toBe(200);
    const listed = await graphql(dev, '{ apiKeys { id kind } }');
    expect(listed.body.data.apiKeys.map((key: { id: string }) => key.id)).toContain(id);

    const revoked = await graphql(dev, REVOKE, { variables: { id } });
    expect(revoked.body.data.revokeApiKey.disabledAt).toEqual(expect.any(String));
    const after = await platform.request('/api/v1/members', { key: secret });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { code: string } }).error.code).toBe('api_key_disabled');
  });

  it('a revoke through the dashboard reaches another edge instance at once, whatever its key cache holds', async () => {
    const otherOrm = await openIdentityStore(platform.databaseUrl);
    // A second edge over the same database and subgraphs, caching keys for 30 s.
    const other = await startEdgeService(testConfig({ keyCacheSeconds: 30 }), otherOrm, platform.subgraphUrls, createLogger('silent'));
    try {
      const otherBase = other.url.replace(/\/graphql$/, '');
      const dev = await signIn('dev@example.com');
      const { id, secret } = (await graphql(dev, CREATE, { variables: { kind: 'LIVE' } })).body.data.createApiKey;
      const members = () => fetch(`${otherBase}/api/v1/members`, { headers: { authorization: `Bearer ${secret}` } }).then((res) => res.status);
      expect(await members()).toBe(200);
      expect(await members()).toBe(200);
      await graphql(dev, REVOKE, { variables: { id } });
      // The key store's notice is delivered on commit; the other edge forgets the key within moments, not 30 s.
      const end = Date.now() + 2000;
      let status = await members();
      while (status !== 401 && Date.now() < end) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        status = await members();
      }
      expect(status).toBe(401);
    } finally {
      await other.stop();
      await otherOrm.close(true);
    }
  });

  it('a viewer lists keys but cannot create or revoke them (FORBIDDEN, insufficient_role)', async () => {
    const key = await platform.identity().createKey({ account: 'acme', kind: 'live' });
    const viewer = await signIn('viewer@example.com');
    const listed = await graphql(viewer, '{ apiKeys { id } }');
    expect(listed.body.data.apiKeys.map((row: { id: string }) => row.id)).toContain(key.id);
    for (const [query, variables] of [[CREATE, { kind: 'TEST' }], [REVOKE, { id: key.id }]] as const) {
      const refused = await graphql(viewer, query, { variables });
      expect(refused.body.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'insufficient_role' });
    }
    expect((await platform.request('/api/v1/members', { key: key.secret })).status).toBe(200);
  });

  it('acts in test mode with x-dashboard-kind: test (which, like a test key, cannot issue live keys)', async () => {
    const dev = await signIn('dev@example.com');
    const created = await graphql(dev, CREATE, { kind: 'test', variables: { kind: 'TEST' } });
    expect(created.body.data.createApiKey.kind).toBe('test');
    const refused = await graphql(dev, CREATE, { kind: 'test', variables: { kind: 'LIVE' } });
    expect(refused.body.errors?.[0].extensions.code).toBe('FORBIDDEN');
    const bogus = await graphql(dev, '{ apiKeys { id } }', { kind: 'root' });
    expect(bogus.status).toBe(400);
    expect(bogus.body.errors?.[0].extensions.reason).toBe('invalid_kind');
  });

  it('refuses a POST without the CSRF token, and a session that has ended', async () => {
    const dev = await signIn('dev@example.com');
    const refused = await graphql(dev, '{ apiKeys { id } }', { csrf: null });
    expect(refused.status).toBe(403);
    expect(refused.body.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'csrf_failed' });
    const ended = await graphql({ cookie: 'dash_session=ended', csrf: 'x' }, '{ apiKeys { id } }');
    expect(ended.status).toBe(401);
    expect(ended.body.errors?.[0].extensions.reason).toBe('not_signed_in');
  });

  it('the admin kind is for platform admins only', async () => {
    const dev = await signIn('dev@example.com');
    const refused = await graphql(dev, '{ tracerouteKeys { id } }', { kind: 'admin' });
    expect(refused.status).toBe(403);
    expect(refused.body.errors?.[0].extensions.reason).toBe('insufficient_role');
    const ops = await signIn('ops@example.com');
    const issued = await graphql(ops, 'mutation { issueTracerouteKey(account: "lab-a", name: "lab") { id secret } }', { kind: 'admin' });
    expect(issued.body.errors).toBeUndefined();
    expect((await platform.request('/v1/public/stats', { headers: { 'x-api-key': issued.body.data.issueTracerouteKey.secret } })).status).toBe(200);
    // The live kind (the default) is not admin: the traceroute admin area refuses it.
    const asLive = await graphql(ops, '{ tracerouteKeys { id } }');
    expect(asLive.body.errors?.[0].extensions.code).toBe('FORBIDDEN');
  });

  it('a request with an Authorization header is a key request, whatever cookie it carries', async () => {
    const viewer = await signIn('viewer@example.com');
    const res = await platform.request('/graphql', {
      method: 'POST',
      headers: { cookie: viewer.cookie, authorization: 'Bearer sk_live_not_a_key' },
      json: { query: '{ apiKeys { id } }' },
    });
    expect(res.status).toBe(401);
  });
});

function connect(session: Session | undefined, params: Record<string, unknown>, origin?: string) {
  const state: { closed?: { code: number; reason: string }; connected: boolean } = { connected: false };
  const headers = { ...(session ? { cookie: session.cookie } : {}), origin: origin ?? platform.baseUrl };
  class CookieSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  const client = createClient({
    url: platform.graphqlUrl.replace(/^http/, 'ws'),
    webSocketImpl: CookieSocket,
    connectionParams: params,
    retryAttempts: 0,
    lazy: false,
    // Refusals are asserted through `closed`, not logged.
    onNonLazyError: () => {},
    on: {
      connected: () => (state.connected = true),
      closed: (event) => (state.closed = { code: (event as { code: number }).code, reason: (event as { reason: string }).reason }),
    },
  });
  clients.push(client);
  return { client, state };
}

async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

function query(client: Client, text: string): Promise<GraphQLBody> {
  return new Promise((resolve, reject) => {
    let result: GraphQLBody = {};
    client.subscribe({ query: text }, { next: (value) => (result = value as GraphQLBody), error: reject, complete: () => resolve(result) });
  });
}

describe('the websocket with a dashboard session', () => {
  it('authenticates with the cookie and connectionParams.csrfToken, and ends when the user signs out everywhere', async () => {
    const dev = await signIn('dev@example.com');
    const { client, state } = connect(dev, { csrfToken: dev.csrf });
    const result = await query(client, '{ apiKeys { id } }');
    expect(result.errors).toBeUndefined();
    expect(Array.isArray(result.data.apiKeys)).toBe(true);
    expect(state.connected).toBe(true);
    const out = await platform.request('/dashboard/api/session/revoke-all', { method: 'POST', headers: { cookie: dev.cookie, 'x-csrf-token': dev.csrf } });
    expect(out.status).toBe(204);
    await until(() => state.closed !== undefined);
    expect(state.closed).toMatchObject({ code: 4403 });
  });

  it('refuses the socket without the CSRF token, from another origin, or without a session', async () => {
    const dev = await signIn('dev@example.com');
    const noToken = connect(dev, {});
    await until(() => noToken.state.closed !== undefined);
    expect(noToken.state.closed).toMatchObject({ code: 4403, reason: expect.stringContaining('csrf_failed') });
    const foreign = connect(dev, { csrfToken: dev.csrf }, 'https://evil.example');
    await until(() => foreign.state.closed !== undefined);
    expect(foreign.state.closed).toMatchObject({ code: 4403, reason: expect.stringContaining('csrf_failed') });
    const none = connect({ cookie: 'dash_session=ended', csrf: '' }, { csrfToken: 'x' });
    await until(() => none.state.closed !== undefined);
    expect(none.state.closed).toMatchObject({ code: 4401 });
  });

  it('the admin kind over the socket is for platform admins only', async () => {
    const dev = await signIn('dev@example.com');
    const refused = connect(dev, { csrfToken: dev.csrf, kind: 'admin' });
    await until(() => refused.state.closed !== undefined);
    expect(refused.state.closed).toMatchObject({ code: 4403, reason: expect.stringContaining('insufficient_role') });
    const ops = await signIn('ops@example.com');
    const { client } = connect(ops, { csrfToken: ops.csrf, kind: 'admin' });
    const result = await query(client, '{ tracerouteKeys { id } }');
    expect(result.errors).toBeUndefined();
  });
});
