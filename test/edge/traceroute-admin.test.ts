import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

let platform: TestPlatform;
let admin: string;
beforeAll(async () => {
  platform = await startTestPlatform();
  admin = await platform.issueKey('operators', 'admin');
});
afterAll(async () => {
  await platform?.close();
});

async function graphql<T = any>(key: string, query: string, variables?: Record<string, unknown>) {
  const response = await platform.request('/graphql', { method: 'POST', key, json: { query, variables } });
  return (await response.json()) as { data?: T; errors?: { message: string; extensions: Record<string, unknown> }[] };
}

const ISSUE = `mutation($account: String!, $hourly: Int, $daily: Int) {
  issueTracerouteKey(account: $account, name: "lab", hourlyLimit: $hourly, dailyLimit: $daily) { id secret account hourlyLimit dailyLimit state }
}`;

describe('the traceroute admin area in GraphQL', () => {
  it('issues a key with its own limits that the traceroute API then honours', async () => {
    const issued = await graphql(admin, ISSUE, { account: 'lab-a', hourly: 2, daily: 10 });
    expect(issued.errors).toBeUndefined();
    const key = issued.data.issueTracerouteKey;
    expect(key).toMatchObject({ account: 'lab-a', hourlyLimit: 2, dailyLimit: 10, state: 'ACTIVE' });
    expect(key.secret).toMatch(/^trk_/);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await platform.request('/v1/public/traces', { headers: { 'x-api-key': key.secret } })).status);
    expect(statuses).toEqual([200, 200, 429]);
  });

  it('lists, disables, re-enables and expires keys, and the API follows each change', async () => {
    const { data } = await graphql(admin, ISSUE, { account: 'lab-b' });
    const { id, secret } = data.issueTracerouteKey;
    const call = () => platform.request('/v1/public/traces', { headers: { 'x-api-key': secret } });
    const listed = await graphql(admin, '{ tracerouteKeys(account: "lab-b") { id hourlyLimit dailyLimit state } }');
    expect(listed.data.tracerouteKeys).toEqual([{ id, hourlyLimit: 100, dailyLimit: 2000, state: 'ACTIVE' }]);

    expect((await graphql(admin, `mutation { disableTracerouteKey(id: "${id}") { state } }`)).data.disableTracerouteKey.state).toBe('DISABLED');
    expect(((await (await call()).json()) as { error: string }).error).toBe('key_disabled');
    expect((await graphql(admin, `mutation { enableTracerouteKey(id: "${id}") { state } }`)).data.enableTracerouteKey.state).toBe('ACTIVE');
    expect((await call()).status).toBe(200);
    expect((await graphql(admin, `mutation { expireTracerouteKey(id: "${id}") { state } }`)).data.expireTracerouteKey.state).toBe('EXPIRED');
    expect(((await (await call()).json()) as { error: string }).error).toBe('key_expired');
  });

  it('is closed to every key but an admin key', async () => {
    for (const kind of ['live', 'test', 'traceroute', 'text'] as const) {
      const key = await platform.issueKey(`not-admin-${kind}`, kind);
      const result = await graphql(key, ISSUE, { account: 'lab-c' });
      expect(result.errors?.[0].extensions.code, kind).toBe('FORBIDDEN');
      const listed = await graphql(key, '{ tracerouteKeys { id } }');
      expect(listed.errors?.[0].extensions.code, kind).toBe('FORBIDDEN');
    }
    expect(await platform.identity().listKeys({ account: 'lab-c' })).toEqual([]);
  });

  it('manages traceroute keys only, and refuses bad limits', async () => {
    const live = await platform.identity().createKey({ account: 'lab-d', kind: 'live' });
    const result = await graphql(admin, `mutation { disableTracerouteKey(id: "${live.id}") { id } }`);
    expect(result.errors?.[0].extensions.code).toBe('NOT_FOUND');
    const bad = await graphql(admin, ISSUE, { account: 'lab-d', hourly: 0 });
    expect(bad.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'hourlyLimit' });
  });
});
