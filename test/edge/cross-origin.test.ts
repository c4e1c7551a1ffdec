import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/**
 * CORS as a browser meets it: a page on a listed origin sends a preflight (no key), then its call
 * with a key, and reads the answer and the headers it needs (request id, rate limit, Retry-After).
 * No credentials cross origins: the dashboard's session stays same-origin.
 */
const APP = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

function preflight(platform: TestPlatform, path: string, origin: string, method: string, headers = 'authorization, content-type') {
  return platform.request(path, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });
}

const TYPENAME = { query: '{ __typename }' };

describe('with CORS_ORIGINS naming an origin', () => {
  let platform: TestPlatform;
  let key: string;
  let traceKey: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ crossOrigins: loadConfig({ CORS_ORIGINS: `${APP}, http://localhost:3000` }).crossOrigins });
    key = await platform.issueKey('acct-cors');
    traceKey = await platform.issueKey('acct-cors-traces', 'traceroute');
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('answers a preflight to /graphql with 204 before any key is asked for', async () => {
    const response = await preflight(platform, '/graphql', APP, 'POST');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    expect(response.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
    expect(response.headers.get('access-control-max-age')).toBe('600');
    expect(response.headers.get('vary')).toMatch(/origin/i);
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('lets the page read the answer and the headers it needs, errors included', async () => {
    const answered = await platform.request('/graphql', { method: 'POST', key, json: TYPENAME, headers: { origin: APP } });
    expect(answered.status).toBe(200);
    expect(answered.headers.get('access-control-allow-origin')).toBe(APP);
    const exposed = answered.headers.get('access-control-expose-headers')!.toLowerCase().split(',');
    for (const name of ['x-request-id', 'x-ratelimit-remaining', 'retry-after', 'idempotent-replayed']) expect(exposed).toContain(name);
    const refused = await platform.request('/graphql', { method: 'POST', json: TYPENAME, headers: { origin: APP } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('gives an origin it does not name no leave to read', async () => {
    const response = await preflight(platform, '/graphql', OTHER, 'POST');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const call = await platform.request('/graphql', { method: 'POST', key, json: TYPENAME, headers: { origin: OTHER } });
    expect(call.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('serves the REST, traceroute and inference interfaces alike', async () => {
    const rest = await preflight(platform, '/api/v1/members/mem_x', APP, 'PATCH', 'authorization, content-type, idempotency-key');
    expect(rest.status).toBe(204);
    expect(rest.headers.get('access-control-allow-methods')).toContain('PATCH');
    const listed = await platform.request('/api/v1/members', { key, headers: { origin: 'http://localhost:3000' } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe('http://localhost:3000');
    const traces = await preflight(platform, '/v1/public/traces', APP, 'GET', 'x-api-key');
    expect(traces.status).toBe(204);
    expect(traces.headers.get('access-control-allow-headers')).toBe('x-api-key');
    const read = await platform.request('/v1/public/traces', { headers: { origin: APP, 'x-api-key': traceKey } });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBe(APP);
    const inference = await preflight(platform, '/inference/proxy/v1/chat/completions', APP, 'POST');
    expect(inference.status).toBe(204);
    expect(inference.headers.get('access-control-allow-origin')).toBe(APP);
    const models = await platform.request('/inference/proxy/v1/models', { headers: { origin: APP } });
    expect(models.status).toBe(200);
    expect(models.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('leaves an OPTIONS that is no preflight to the interface', async () => {
    const plain = await platform.request('/api/v1/members', { method: 'OPTIONS', key });
    const fromPage = await platform.request('/api/v1/members', { method: 'OPTIONS', key, headers: { origin: APP } });
    expect(fromPage.status).toBe(plain.status);
    expect(fromPage.headers.get('allow')).toBe(plain.headers.get('allow'));
    expect(fromPage.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('keeps the dashboard same-origin', async () => {
    const response = await preflight(platform, '/dashboard/api/session', APP, 'POST');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.status).not.toBe(204);
  });
});

describe('with CORS_ORIGINS=*', () => {
  let platform: TestPlatform;
  let key: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ crossOrigins: loadConfig({ CORS_ORIGINS: '*' }).crossOrigins });
    key = await platform.issueKey('acct-cors-any');
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('lets any origin call, never with credentials', async () => {
    const response = await platform.request('/graphql', { method: 'POST', key, json: TYPENAME, headers: { origin: OTHER } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

describe('without CORS_ORIGINS', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform();
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('lets no other origin read', async () => {
    const response = await preflight(platform, '/graphql', APP, 'POST');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.status).not.toBe(204);
  });
});

describe('CORS_ORIGINS', () => {
  const read = (value: string) => loadConfig({ CORS_ORIGINS: value }).crossOrigins;

  it('takes *, or origins in the form browsers send them', () => {
    expect(read('')).toBeUndefined();
    expect(read('*')).toBe('*');
    expect(read(' https://App.Example.com/ , http://localhost:3000,https://a.example:443 ')).toEqual(['https://app.example.com', 'http://localhost:3000', 'https://a.example']);
  });

  it('stops the start on anything else, naming the variable', () => {
    for (const bad of ['app.example.com', 'https://app.example.com/path', 'ftp://files.example.com', 'https://user@app.example.com', 'https://app.example.com?x=1']) {
      expect(() => read(bad), bad).toThrow(/^CORS_ORIGINS must be/);
    }
  });
});
