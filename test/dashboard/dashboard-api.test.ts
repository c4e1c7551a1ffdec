import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DASHBOARD_SETTINGS } from '../../platform/config.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../support/platform-harness.js';

const API = '/dashboard/api';
const PASSWORD = 'correct horse battery';
let platform: TestPlatform;
let db: pg.Client;

beforeAll(async () => {
  platform = await startTestPlatform({
    // Many sign-ins from one address in this file; the limits have their own file (sign-in-limits.test.ts).
    dashboard: { ...DEFAULT_DASHBOARD_SETTINGS, signInPerAddress: 1000, signInFailuresPerEmail: 1000 },
    // Low enough for the usage test to see 429s of its own account.
    rateLimits: { ...testConfig().rateLimits, livePerMinute: 5 },
  });
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
  await platform.createDashboardUser({ account: 'acme', email: 'Owner@Example.com', password: PASSWORD, name: 'Olive' });
  await platform.createDashboardUser({ account: 'acme', email: 'dev@example.com', password: PASSWORD, role: 'developer' });
  await platform.createDashboardUser({ account: 'acme', email: 'viewer@example.com', password: PASSWORD, role: 'viewer' });
});
afterAll(async () => {
  await db?.end();
  await platform?.close();
});

interface Session {
  cookie: string;
  csrf: string;
  setCookie: string;
  body: Record<string, any>;
}

async function signIn(email: string, password = PASSWORD): Promise<Session> {
  const res = await platform.request(`${API}/session`, { method: 'POST', json: { email, password } });
  expect(res.status).toBe(200);
  const setCookie = res.headers.getSetCookie().find((value) => value.startsWith('dash_session='))!;
  const body = (await res.json()) as Record<string, any>;
  return { cookie: setCookie.split(';')[0], csrf: body.csrfToken, setCookie, body };
}

function call(session: Session | undefined, path: string, init: RequestInit & { json?: unknown; csrf?: string | null } = {}) {
  const { csrf, headers, ...rest } = init;
  const token = csrf === null ? undefined : (csrf ?? session?.csrf);
  return platform.request(`${API}${path}`, {
    ...rest,
    headers: { ...(session ? { cookie: session.cookie } : {}), ...(token ? { 'x-csrf-token': token } : {}), ...(headers as Record<string, string>) },
  });
}

async function errorOf(res: Response): Promise<{ status: number; code: string }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.message).toEqual(expect.any(String));
  return { status: res.status, code: body.error.code };
}

describe('signing in', () => {
  it('answers the user, the account with its key cap, a CSRF token, and an HttpOnly SameSite=Strict cookie', async () => {
    const session = await signIn('owner@example.com');
    expect(session.body.user).toMatchObject({ email: 'owner@example.com', name: 'Olive', role: 'owner', platformAdmin: false });
    expect(session.body.account).toMatchObject({ name: 'acme', keyCap: { max: 20, active: 0 }, limits: { livePerMinute: 5 } });
    expect(session.body.csrfToken).toMatch(/^[\w-]{20,}$/);
    const flags = session.setCookie.split(';').map((part) => part.trim().toLowerCase());
    expect(flags).toEqual(expect.arrayContaining(['httponly', 'samesite=strict', 'path=/']));
    // Plain http here: Secure would make the browser drop it.
    expect(flags).not.toContain('secure');
    const me = await call(session, '/session');
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ user: { email: 'owner@example.com' }, csrfToken: session.csrf });
  });

  it('takes the email in any case', async () => {
    expect((await signIn('OWNER@example.COM')).body.user.email).toBe('owner@example.com');
  });

  it('refuses a wrong password and an unknown email alike', async () => {
    for (const json of [{ email: 'owner@example.com', password: 'wrong password' }, { email: 'nobody@example.com', password: PASSWORD }]) {
      const res = await platform.request(`${API}/session`, { method: 'POST', json });
      expect(res.headers.getSetCookie()).toEqual([]);
      expect(await errorOf(res)).toEqual({ status: 401, code: 'invalid_credentials' });
    }
  });

  it('refuses bodies without an email and password, and bad JSON, as invalid_body', async () => {
    expect(await errorOf(await platform.request(`${API}/session`, { method: 'POST', json: { email: 'owner@example.com' } }))).toEqual({ status: 400, code: 'invalid_body' });
    expect(await errorOf(await platform.request(`${API}/session`, { method: 'POST', json: [1] }))).toEqual({ status: 400, code: 'invalid_body' });
    const bad = await platform.request(`${API}/session`, { method: 'POST', body: '{"email":', headers: { 'content-type': 'application/json' } });
    expect(await errorOf(bad)).toEqual({ status: 400, code: 'invalid_body' });
  });

  it('answers 401 not_signed_in without a session or with an unknown one', async () => {
    expect(await errorOf(await call(undefined, '/session'))).toEqual({ status: 401, code: 'not_signed_in' });
    expect(await errorOf(await call({ cookie: 'dash_session=forged', csrf: 'x' } as Session, '/session'))).toEqual({ status: 401, code: 'not_signed_in' });
  });
});

describe('CSRF', () => {
  it('refuses a state change without the session token, with another one, or from another origin', async () => {
    const session = await signIn('owner@example.com');
    const invite = (init: { csrf?: string | null; headers?: Record<string, string> }) =>
      call(session, '/invitations', { method: 'POST', json: { email: 'csrf@example.com', role: 'viewer' }, ...init });
    expect(await errorOf(await invite({ csrf: null }))).toEqual({ status: 403, code: 'csrf_failed' });
    expect(await errorOf(await invite({ csrf: 'not-the-token' }))).toEqual({ status: 403, code: 'csrf_failed' });
    expect(await errorOf(await invite({ headers: { origin: 'https://evil.example' } }))).toEqual({ status: 403, code: 'csrf_failed' });
    expect(await errorOf(await call(session, '/session', { method: 'DELETE', csrf: null }))).toEqual({ status: 403, code: 'csrf_failed' });
    // Still signed in: none of the refused requests did anything.
    expect((await call(session, '/session')).status).toBe(200);
    const { invitations } = (await (await call(session, '/users')).json()) as { invitations: { email: string }[] };
    expect(invitations.map((invitation) => invitation.email)).not.toContain('csrf@example.com');
    // The platform's own origin passes.
    expect((await invite({ headers: { origin: platform.baseUrl } })).status).toBe(201);
  });
});

describe('session expiry', () => {
  it('ends a session idle for longer than 12 hours, and one past its 7 days', async () => {
    const idle = await signIn('dev@example.com');
    const old = await signIn('dev@example.com');
    await db.query(`update identity.dashboard_session set last_seen_at = now() - interval '12 hours 1 minute' where csrf_token = $1`, [idle.csrf]);
    await db.query(`update identity.dashboard_session set expires_at = now() - interval '1 second' where csrf_token = $1`, [old.csrf]);
    expect(await errorOf(await call(idle, '/session'))).toEqual({ status: 401, code: 'not_signed_in' });
    expect(await errorOf(await call(old, '/session'))).toEqual({ status: 401, code: 'not_signed_in' });
    const { rows } = await db.query(`select count(*)::int as n from identity.dashboard_session where csrf_token = any($1)`, [[idle.csrf, old.csrf]]);
    expect(rows[0].n).toBe(0);
  });

  it('ended sessions that are never presented again are swept at the next sign-in', async () => {
    const forgotten = await signIn('dev@example.com');
    await db.query(`update identity.dashboard_session set expires_at = now() - interval '1 second' where csrf_token = $1`, [forgotten.csrf]);
    await signIn('viewer@example.com');
    const { rows } = await db.query(`select count(*)::int as n from identity.dashboard_session where csrf_token = $1`, [forgotten.csrf]);
    expect(rows[0].n).toBe(0);
  });

  it('keeps a session that is used within the idle time', async () => {
    const active = await signIn('dev@example.com');
    await db.query(`update identity.dashboard_session set last_seen_at = now() - interval '11 hours' where csrf_token = $1`, [active.csrf]);
    expect((await call(active, '/session')).status).toBe(200);
    const { rows } = await db.query(`select last_seen_at > now() - interval '1 minute' as touched from identity.dashboard_session where csrf_token = $1`, [active.csrf]);
    expect(rows[0].touched).toBe(true);
  });
});

describe('signing out', () => {
  it('ends this session only, and clears the cookie', async () => {
    const here = await signIn('viewer@example.com');
    const there = await signIn('viewer@example.com');
    const out = await call(here, '/session', { method: 'DELETE' });
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie().join()).toMatch(/dash_session=;.*Expires=Thu, 01 Jan 1970/);
    expect((await call(here, '/session')).status).toBe(401);
    expect((await call(there, '/session')).status).toBe(200);
  });

  it('everywhere: every session of the user ends, other users keep theirs', async () => {
    const here = await signIn('viewer@example.com');
    const there = await signIn('viewer@example.com');
    const someoneElse = await signIn('dev@example.com');
    expect((await call(here, '/session/revoke-all', { method: 'POST' })).status).toBe(204);
    expect((await call(here, '/session')).status).toBe(401);
    expect((await call(there, '/session')).status).toBe(401);
    expect((await call(someoneElse, '/session')).status).toBe(200);
  });
});

describe('invitations', () => {
  it('an owner invites; the link is shown once; the invitee signs up with it and is signed in', async () => {
    const owner = await signIn('owner@example.com');
    const created = await call(owner, '/invitations', { method: 'POST', json: { email: 'New@Example.com', role: 'developer' } });
    expect(created.status).toBe(201);
    const body = (await created.json()) as { invitation: Record<string, unknown>; token: string; url: string };
    expect(body.invitation).toMatchObject({ email: 'new@example.com', role: 'developer', expiresAt: expect.any(String) });
    expect(new Date(body.invitation.expiresAt as string).getTime() - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expect(body.url).toBe(`/dashboard/#/invite/${body.token}`);
    // Only the hash is stored.
    const { rows } = await db.query('select token_hash from identity.dashboard_invitation where id = $1', [body.invitation.id]);
    expect(rows[0].token_hash).not.toContain(body.token);

    const accepted = await platform.request(`${API}/invitations/accept`, { method: 'POST', json: { token: body.token, name: 'Newt', password: 'long enough pw' } });
    expect(accepted.status).toBe(201);
    const signedIn = (await accepted.json()) as Record<string, any>;
    expect(signedIn.user).toMatchObject({ email: 'new@example.com', name: 'Newt', role: 'developer', platformAdmin: false });
    expect(signedIn.account.name).toBe('acme');
    const cookie = accepted.headers.getSetCookie()[0].split(';')[0];
    expect((await call({ cookie, csrf: signedIn.csrfToken } as Session, '/session')).status).toBe(200);
    expect((await signIn('new@example.com', 'long enough pw')).body.user.role).toBe('developer');

    const again = await platform.request(`${API}/invitations/accept`, { method: 'POST', json: { token: body.token, name: 'Twice', password: 'long enough pw' } });
    expect(await errorOf(again)).toEqual({ status: 404, code: 'invitation_not_found' });
    const listed = (await (await call(owner, '/users')).json()) as { users: { email: string; role: string }[]; invitations: { email: string; acceptedAt: string | null }[] };
    expect(listed.users.map((user) => user.email)).toEqual(expect.arrayContaining(['owner@example.com', 'dev@example.com', 'viewer@example.com', 'new@example.com']));
    expect(listed.invitations.find((invitation) => invitation.email === 'new@example.com')?.acceptedAt).toEqual(expect.any(String));
  });

  it('refuses developers and viewers: they cannot invite or list users', async () => {
    for (const email of ['dev@example.com', 'viewer@example.com']) {
      const session = await signIn(email);
      expect(await errorOf(await call(session, '/invitations', { method: 'POST', json: { email: 'x@example.com', role: 'owner' } }))).toEqual({ status: 403, code: 'insufficient_role' });
      expect(await errorOf(await call(session, '/users'))).toEqual({ status: 403, code: 'insufficient_role' });
    }
  });

  it('refuses an expired invitation (410), an unknown token (404), a short password (400), a bad role or email (400), an existing user (409)', async () => {
    const owner = await signIn('owner@example.com');
    const invite = async (email: string, role = 'viewer') => call(owner, '/invitations', { method: 'POST', json: { email, role } });
    const { token, invitation } = (await (await invite('late@example.com')).json()) as { token: string; invitation: { id: string } };
    const accept = (json: Record<string, unknown>) => platform.request(`${API}/invitations/accept`, { method: 'POST', json });
    expect(await errorOf(await accept({ token, name: 'Late', password: 'short' }))).toEqual({ status: 400, code: 'weak_password' });
    await db.query(`update identity.dashboard_invitation set expires_at = now() - interval '1 second' where id = $1`, [invitation.id]);
    expect(await errorOf(await accept({ token, name: 'Late', password: 'long enough pw' }))).toEqual({ status: 410, code: 'invitation_expired' });
    expect(await errorOf(await accept({ token: 'inv_unknown', name: 'X', password: 'long enough pw' }))).toEqual({ status: 404, code: 'invitation_not_found' });
    expect(await errorOf(await accept({ token }))).toEqual({ status: 400, code: 'invalid_body' });
    expect(await errorOf(await invite('someone@example.com', 'admin'))).toEqual({ status: 400, code: 'invalid_body' });
    expect(await errorOf(await invite('not an email'))).toEqual({ status: 400, code: 'invalid_body' });
    expect(await errorOf(await invite('DEV@example.com'))).toEqual({ status: 409, code: 'user_exists' });
  });
});

describe('usage', () => {
  it('counts the account\'s requests per minute, their statuses and 429s, per mode, and the slowest paths', async () => {
    await platform.createDashboardUser({ account: 'usage-co', email: 'usage@example.com', password: PASSWORD });
    const live = await platform.issueKey('usage-co', 'live');
    const test = await platform.issueKey('usage-co', 'test');
    const statuses: number[] = [];
    // 7 live requests in a window of 5: two are refused.
    for (let i = 0; i < 6; i++) statuses.push((await platform.request('/api/v1/members', { key: live })).status);
    statuses.push((await platform.request('/api/v1/members/0197a0e0-0000-7000-8000-000000000000', { key: live })).status);
    expect(statuses.filter((status) => status === 429)).toHaveLength(2);
    expect((await platform.request('/api/v1/members', { key: test })).status).toBe(200);

    const session = await signIn('usage@example.com');
    const report = (await (await call(session, '/usage?mode=live&range=hour')).json()) as Record<string, any>;
    expect(report).toMatchObject({ mode: 'live', range: 'hour', limitPerMinute: 5 });
    expect(report.series).toHaveLength(60);
    const total = (field: string) => report.series.reduce((sum: number, minute: Record<string, number>) => sum + minute[field], 0);
    expect(total('requests')).toBe(7);
    expect(total('rateLimited')).toBe(2);
    expect(total('serverErrors')).toBe(0);
    const byStatus = Object.fromEntries(report.byStatus.map((row: { status: number; count: number }) => [row.status, row.count]));
    expect(byStatus[429]).toBe(2);
    expect(Object.values(byStatus).reduce((a, b) => (a as number) + (b as number), 0)).toBe(7);
    const paths = report.slowestPaths.map((row: { method: string; path: string }) => `${row.method} ${row.path}`);
    expect(paths).toContain('GET /api/v1/members');
    const members = report.slowestPaths.find((row: { path: string }) => row.path === '/api/v1/members');
    expect(members.maxMs).toBeGreaterThanOrEqual(members.avgMs);

    // Test mode is its own series; another account's requests are not counted.
    const testReport = (await (await call(session, '/usage?mode=test&range=day')).json()) as Record<string, any>;
    expect(testReport.series).toHaveLength(1440);
    expect(testReport.series.reduce((sum: number, minute: { requests: number }) => sum + minute.requests, 0)).toBe(1);
    const acme = await signIn('owner@example.com');
    const acmeReport = (await (await call(acme, '/usage')).json()) as Record<string, any>;
    expect(acmeReport.series.reduce((sum: number, minute: { requests: number }) => sum + minute.requests, 0)).toBe(0);
    expect(await errorOf(await call(session, '/usage?mode=sandbox'))).toEqual({ status: 400, code: 'invalid_query' });
    expect(await errorOf(await call(session, '/usage?range=week'))).toEqual({ status: 400, code: 'invalid_query' });
    expect(await errorOf(await call(undefined, '/usage'))).toEqual({ status: 401, code: 'not_signed_in' });
  });
});

describe('traceroute keys in the admin area', () => {
  it("shows each key's use against its hourly and daily windows to platform admins only, without counting", async () => {
    await platform.createDashboardUser({ account: 'observatory', email: 'operator@example.com', password: PASSWORD, platformAdmin: true });
    const key = await platform.issueKey('research-lab', 'traceroute', { hourlyLimit: 50, dailyLimit: 400 });
    for (let i = 0; i < 3; i++) expect((await platform.request('/v1/public/traces', { headers: { 'x-api-key': key } })).status).toBe(200);

    const operator = await signIn('operator@example.com');
    const read = async () => {
      const res = await call(operator, '/traceroute-keys/use');
      expect(res.status).toBe(200);
      return ((await res.json()) as { keys: { id: string; hourly: Record<string, unknown>; daily: Record<string, unknown> }[] }).keys;
    };
    const [id] = (await platform.identity().listKeys({ kind: 'traceroute', account: 'research-lab' })).map((k) => k.id);
    const use = (await read()).find((row) => row.id === id)!;
    expect(use.hourly).toMatchObject({ used: 3, limit: 50 });
    expect(use.daily).toMatchObject({ used: 3, limit: 400 });
    expect(Date.parse(use.hourly.resetAt as string)).toBeGreaterThan(Date.now());
    // Reading is not a request of the key: the count stays.
    expect((await read()).find((row) => row.id === id)!.hourly).toMatchObject({ used: 3 });

    const owner = await signIn('owner@example.com');
    expect(await errorOf(await call(owner, '/traceroute-keys/use'))).toEqual({ status: 403, code: 'insufficient_role' });
    expect(await errorOf(await call(undefined, '/traceroute-keys/use'))).toEqual({ status: 401, code: 'not_signed_in' });
  });
});
