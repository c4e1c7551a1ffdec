import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCutMidStream } from '../../support/cut-export.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

const SAMPLE = path.resolve(import.meta.dirname, '../../fixtures/traceroute/ripe-atlas-traceroutes.jsonl');

let platform: TestPlatform;
let key: string;
let stored: number;
beforeAll(async () => {
  platform = await startTestPlatform();
  key = await platform.issueKey('researcher', 'traceroute');
  const admin = await platform.issueKey('operators', 'admin');
  const response = await platform.request('/graphql', {
    method: 'POST',
    key: admin,
    json: { query: 'mutation($c: String!) { importTraces(content: $c) { stored } }', variables: { c: await readFile(SAMPLE, 'utf8') } },
  });
  stored = ((await response.json()) as { data: { importTraces: { stored: number } } }).data.importTraces.stored;
});
afterAll(async () => {
  await platform?.close();
});

describe('GET /v1/public/traces/export through the edge', () => {
  it('applies the key rules first', async () => {
    const response = await platform.request('/v1/public/traces/export');
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'api_key_required' });
  });

  it('streams every trace of the window as CSV, one row each under the header', async () => {
    expect(stored).toBeGreaterThan(0);
    const response = await platform.request('/v1/public/traces/export?format=csv&since=2000-01-01T00:00:00Z', { headers: { 'x-api-key': key } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/csv/);
    expect(response.headers.get('x-ratelimit-limit')).toBe('100');
    const rows = (await response.text()).trim().split('\n');
    expect(rows[0]).toMatch(/^trace_id,measured_at,msm_id,probe_id,af,protocol,direction,status,/);
    expect(rows).toHaveLength(stored + 1);
  });

  it('streams JSON by default and refuses a limit over 10,000 naming it', async () => {
    const json = await platform.request('/v1/public/traces/export?since=2000-01-01T00:00:00Z&include_hops=false', { headers: { 'x-api-key': key } });
    expect(json.status).toBe(200);
    expect(((await json.json()) as { data: unknown[] }).data).toHaveLength(stored);
    const refused = await platform.request('/v1/public/traces/export?limit=10001', { headers: { 'x-api-key': key } });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: 'invalid_parameter', param: 'limit' });
    // HEAD gets the same status with no body to read; another method is 405 with Allow.
    expect((await platform.request('/v1/public/traces/export?limit=10001', { method: 'HEAD', headers: { 'x-api-key': key } })).status).toBe(400);
    const posted = await platform.request('/v1/public/traces/export', { method: 'POST', headers: { 'x-api-key': key } });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET');
    expect(await posted.json()).toMatchObject({ error: 'method_not_allowed' });
  });

  it('refuses a bad or NUL-carrying parameter with 400 naming it, before any byte of the body', async () => {
    for (const [param, query] of [['target_ip', 'target_ip=%00'], ['target_ip', 'target_ip=dawn.com'], ['target_domain', 'target_domain=a%00b'], ['status', 'status=%01']]) {
      const response = await platform.request(`/v1/public/traces/export?${query}`, { headers: { 'x-api-key': key } });
      expect(response.status, query).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_parameter', param });
    }
  });

  it('passes a failure after the first byte on to the client: the trailing error record, then no last chunk', async () => {
    const { status, body, complete } = await exportCutMidStream(platform.databaseUrl, `${platform.baseUrl}/v1/public/traces/export?since=2000-01-01T00:00:00Z`, {
      'x-api-key': key,
      'x-request-id': 'export-cut',
    });
    expect(status).toBe(200);
    expect(complete).toBe(false);
    expect(JSON.parse(body.slice('{"data":['.length))).toMatchObject({ error: 'export_failed', request_id: 'export-cut' });
    const after = await platform.request('/v1/public/traces/export?format=csv&since=2000-01-01T00:00:00Z', { headers: { 'x-api-key': key } });
    expect(after.status).toBe(200);
    expect((await after.text()).trim().split('\n')).toHaveLength(stored + 1);
  });

  it("is served by the traceroute subgraph, which refuses it without the edge's signed principal", async () => {
    const direct = await fetch(new URL('/traces/export?format=csv', platform.subgraphUrls.traceroute));
    expect(direct.status).toBe(401);
  });
});
