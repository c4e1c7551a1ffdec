import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

const lines: Record<string, any>[] = [];
let platform: TestPlatform;
beforeAll(async () => {
  // Debug: every line any part writes, not only the request lines, is searched for secrets.
  platform = await startTestPlatform({}, { level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
});
afterAll(async () => {
  await platform?.close();
});

describe('request logs', () => {
  it('write one info line per request with its id, and never a credential', async () => {
    const live = await platform.issueKey('logs', 'live');
    const traceroute = await platform.issueKey('logs', 'traceroute');
    lines.length = 0;
    const responses = [
      await platform.request('/api/v1/members', { key: live, headers: { 'x-request-id': 'log-1' } }),
      await platform.request('/graphql', { method: 'POST', key: live, json: { query: '{ members { data { id } } }' }, headers: { 'x-request-id': 'log-2' } }),
      await platform.request('/v1/public/traces', { headers: { 'x-api-key': traceroute, 'x-request-id': 'log-3' } }),
      await platform.request(`/v1/public/traces?limit=5&api_key=${traceroute}`, { headers: { 'x-request-id': 'log-4' } }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const requestLines = lines.filter((line) => line.req && line.res && line.service === 'gateway');
    expect(requestLines.map((line) => line.req.id).sort()).toEqual(['log-1', 'log-2', 'log-3', 'log-4']);
    // The subgraphs log the same request under the same id.
    const subgraphIds = new Set(lines.filter((line) => line.req && line.service !== 'gateway').map((line) => line.req.id));
    expect([...subgraphIds].sort()).toEqual(['log-1', 'log-2', 'log-3', 'log-4']);
    for (const line of requestLines) expect(line.level).toBe(30);
    const everything = JSON.stringify(lines);
    expect(everything).not.toContain(live);
    expect(everything).not.toContain(traceroute);
    expect(requestLines.find((line) => line.req.id === 'log-4')!.req.url).toBe('/v1/public/traces?limit=5&api_key=[redacted]');
  });
});

describe('credentials in logs', () => {
  it('never reach a log line of the edge or a subgraph, whatever interface, header or query parameter carries them', async () => {
    const secrets = {
      live: await platform.issueKey('logs-all', 'live'),
      test: await platform.issueKey('logs-all', 'test'),
      text: await platform.issueKey('logs-all', 'text'),
      image: await platform.issueKey('logs-all', 'image'),
      traceroute: await platform.issueKey('logs-all', 'traceroute'),
      admin: await platform.issueKey('logs-all', 'admin'),
      // Keys that are no keys are secrets too: a typo of a real one, or someone else's.
      unknown: 'sk_live_NotIssuedButSecret0123456789abcd',
      cookie: 'session-cookie-secret-4f9a1c',
    };
    const q = (key: string) => encodeURIComponent(key);
    lines.length = 0;
    const sent: [string, RequestInit & { key?: string; json?: unknown }][] = [
      ['/api/v1/members', { key: secrets.live, headers: { cookie: `session=${secrets.cookie}` } }],
      [`/api/v1/members?limit=1&api_key=${q(secrets.test)}&token=${q(secrets.unknown)}`, { key: secrets.test }],
      ['/api/v1/members', { headers: { 'x-api-key': secrets.unknown } }],
      ['/v1/public/traces', { headers: { 'x-api-key': secrets.traceroute } }],
      [`/v1/public/traces?api_key=${q(secrets.traceroute)}&key=${q(secrets.unknown)}`, {}],
      [`/v1/public/traces/export?format=csv&limit=1&api_key=${q(secrets.traceroute)}`, {}],
      [`/v1/public/traces/export?format=json&limit=1&API_KEY=${q(secrets.traceroute)}`, { headers: { 'x-api-key': secrets.traceroute } }],
      [`/v1/public/stats?api_key=${q(secrets.admin)}`, {}],
      ['/graphql', { method: 'POST', key: secrets.live, json: { query: '{ members { data { id } } }' } }],
      [`/graphql?api_key=${q(secrets.admin)}`, { method: 'POST', key: secrets.admin, json: { query: '{ traces(limit: 1) { data { traceId } } }' } }],
      ['/inference/text/v1/models', { key: secrets.text }],
      [`/inference/image/sdapi/v1/sd-models?token=${q(secrets.image)}`, { key: secrets.image }],
      [`/inference/proxy/v1/models?api_key=${q(secrets.text)}`, { key: secrets.text }],
      ['/inference/gateway/v1/models', { key: secrets.unknown, headers: { 'proxy-authorization': `Basic ${secrets.cookie}` } }],
    ];
    for (const [path, init] of sent) await (await platform.request(path, init)).arrayBuffer();
    // A subgraph redacts by itself too, whoever reaches it (its own request log, not only the relay's stripping).
    for (const url of Object.values(platform.subgraphUrls)) {
      const direct = new URL(url);
      direct.search = `api_key=${q(secrets.traceroute)}&token=${q(secrets.live)}`;
      await (await fetch(direct, { headers: { authorization: `Bearer ${secrets.admin}`, 'x-api-key': secrets.image, cookie: secrets.cookie } })).arrayBuffer();
    }
    expect(lines.filter((line) => line.req && line.service !== 'gateway' && String(line.req.url).includes('token=[redacted]'))).toHaveLength(
      Object.keys(platform.subgraphUrls).length,
    );
    // Every request was logged by the edge, and the subgraphs logged theirs (the export included).
    expect(lines.filter((line) => line.req && line.service === 'gateway')).toHaveLength(sent.length);
    const exportLines = lines.filter((line) => line.req && line.service === 'traceroute' && String(line.req.url).startsWith('/traces/export'));
    expect(exportLines).toHaveLength(2);
    // The relay does not pass the key on at all: the subgraph never holds it.
    for (const line of exportLines) expect(line.req.url).not.toMatch(/api_key/i);
    const everything = JSON.stringify(lines);
    for (const [name, secret] of Object.entries(secrets)) {
      expect(everything.includes(secret) || everything.includes(encodeURIComponent(secret)), name).toBe(false);
    }
  });
});

describe('sessions, cookies and tokens in logs', () => {
  it('never reach a log line: session cookies set and sent, CSRF tokens, invitation tokens, passwords in sign-in and invitation bodies', async () => {
    const password = 'owner-password-7c1e9a';
    await platform.createDashboardUser({ account: 'logs-dash', email: 'owner@logs.example', password });
    lines.length = 0;
    const api = '/dashboard/api';
    const cookieOf = (res: Response) => res.headers.getSetCookie().find((value) => value.startsWith('dash_session='))!.split(';')[0];

    const signIn = await platform.request(`${api}/session`, { method: 'POST', json: { email: 'owner@logs.example', password } });
    expect(signIn.status).toBe(200);
    const cookie = cookieOf(signIn);
    const { csrfToken } = (await signIn.json()) as { csrfToken: string };
    const session = { cookie, 'x-csrf-token': csrfToken };
    // A wrong password, and a sign-in body that is no JSON, carry passwords too.
    const wrongPassword = 'wrong-password-0d4b2f';
    expect((await platform.request(`${api}/session`, { method: 'POST', json: { email: 'owner@logs.example', password: wrongPassword } })).status).toBe(401);
    const brokenPassword = 'broken-body-password-5e8a';
    const broken = await platform.request(`${api}/session`, { method: 'POST', body: `{"email":"owner@logs.example","password":"${brokenPassword}"`, headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    await broken.arrayBuffer();

    expect((await platform.request(`${api}/session`, { headers: { cookie } })).status).toBe(200);
    const invited = await platform.request(`${api}/invitations`, { method: 'POST', headers: session, json: { email: 'dev@logs.example', role: 'developer' } });
    expect(invited.status).toBe(201);
    const { token: invitationToken } = (await invited.json()) as { token: string };
    const invitedPassword = 'invited-password-93af0c';
    const accepted = await platform.request(`${api}/invitations/accept`, { method: 'POST', json: { token: invitationToken, name: 'Dev', password: invitedPassword } });
    expect(accepted.status).toBe(201);
    const invitedCookie = cookieOf(accepted);
    const { csrfToken: invitedCsrf } = (await accepted.json()) as { csrfToken: string };
    // A token that fails its check is a secret all the same (someone's, mistyped).
    const unknownInvitation = 'inv_NotIssuedButSecret9f8e7d6c5b4a';
    expect((await platform.request(`${api}/invitations/accept`, { method: 'POST', json: { token: unknownInvitation, name: 'X', password: invitedPassword } })).status).toBe(404);
    const wrongCsrf = 'wrong-csrf-token-2b7d1e';
    expect((await platform.request(`${api}/invitations`, { method: 'POST', headers: { cookie, 'x-csrf-token': wrongCsrf }, json: { email: 'x@logs.example', role: 'viewer' } })).status).toBe(403);

    // /graphql with the session, over HTTP and over the websocket.
    const graphql = await platform.request('/graphql', { method: 'POST', headers: session, json: { query: 'mutation { createApiKey(kind: TEST, name: "logs") { id } }' } });
    expect(graphql.status).toBe(200);
    expect(((await graphql.json()) as { errors?: unknown }).errors).toBeUndefined();
    class CookieSocket extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers: { cookie: invitedCookie, origin: platform.baseUrl } });
      }
    }
    const client = createClient({ url: platform.graphqlUrl.replace(/^http/, 'ws'), webSocketImpl: CookieSocket, connectionParams: { csrfToken: invitedCsrf }, retryAttempts: 0 });
    const keys = await new Promise<{ errors?: unknown }>((resolve, reject) => {
      let result = {};
      client.subscribe({ query: '{ apiKeys { id } }' }, { next: (value) => (result = value), error: reject, complete: () => resolve(result) });
    });
    expect(keys.errors).toBeUndefined();
    await client.dispose();

    expect((await platform.request(`${api}/session`, { method: 'DELETE', headers: session })).status).toBe(204);

    const secrets = {
      password,
      wrongPassword,
      brokenPassword,
      invitedPassword,
      session: cookie.slice('dash_session='.length),
      invitedSession: invitedCookie.slice('dash_session='.length),
      csrfToken,
      invitedCsrf,
      wrongCsrf,
      invitationToken,
      unknownInvitation,
    };
    // The dashboard's requests were logged (so their lines were searched), with the cookies they set.
    const dashboardLines = lines.filter((line) => line.req && line.service === 'gateway' && String(line.req.url).startsWith(api));
    expect(dashboardLines.length).toBeGreaterThanOrEqual(9);
    expect(dashboardLines.find((line) => line.res?.statusCode === 200 && line.req.method === 'POST')?.res.headers['set-cookie']).toBe('[redacted]');
    expect(dashboardLines.find((line) => line.req.method === 'DELETE')?.req.headers['x-csrf-token']).toBe('[redacted]');
    const everything = JSON.stringify(lines);
    for (const [name, secret] of Object.entries(secrets)) {
      expect(everything.includes(secret) || everything.includes(encodeURIComponent(secret)), name).toBe(false);
    }
  });
});
