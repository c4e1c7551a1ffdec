import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../support/free-port.js';
import { startTestPlatform, testConfig, type TestPlatform } from '../../support/platform-harness.js';

let platform: TestPlatform;
let metricsPort: number;

/** One sample's value from Prometheus's text format, or undefined when no such series is there. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const shown = line.slice(name.length).match(/^\{(.*)\}/)?.[1] ?? '';
    if (Object.entries(labels).every(([key, value]) => shown.includes(`${key}="${value}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
  return response.text();
}

beforeAll(async () => {
  metricsPort = await freePort();
  platform = await startTestPlatform({
    metrics: { port: metricsPort, host: '127.0.0.1' },
    rateLimits: { ...testConfig().rateLimits, livePerMinute: 3 },
  });
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

describe('Prometheus metrics', () => {
  it("counts the edge's requests by interface, route template and status, its subgraph fetches and its rate-limit refusals", async () => {
    const key = await platform.issueKey('acct_metrics');
    const created = await platform.request('/api/v1/members', { method: 'POST', key, json: { name: 'Ada', email: 'ada@example.org' } });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await platform.request(`/api/v1/members/${id}`, { key })).status).toBe(200);
    expect((await platform.request('/api/v1/members', { key })).status).toBe(200);
    expect((await platform.request('/api/v1/members', { key })).status).toBe(429);
    expect((await platform.request('/no/such/path-123')).status).toBe(404);

    const text = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(sample(text, 'platform_http_requests_total', { service: 'gateway', interface: 'membership', route: '/api/v1/members', status: '201' })).toBe(1);
    // The member's id is a template's parameter, not a series of its own.
    expect(sample(text, 'platform_http_requests_total', { service: 'gateway', interface: 'membership', route: '/api/v1/members/:id', status: '200' })).toBe(1);
    expect(text).not.toContain(id);
    expect(sample(text, 'platform_http_requests_total', { service: 'gateway', route: '(unmatched)', status: '404' })).toBe(1);
    expect(sample(text, 'platform_http_request_duration_seconds_count', { service: 'gateway', interface: 'membership', route: '/api/v1/members' })).toBe(3);
    expect(sample(text, 'platform_rate_limit_refusals_total', { interface: 'membership' })).toBe(1);
    expect(sample(text, 'platform_subgraph_fetch_duration_seconds_count', { subgraph: 'membership' })).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'platform_websockets_open', {})).toBe(0);
    expect(sample(text, 'platform_subscriptions_active', {})).toBe(0);
    expect(sample(text, 'process_resident_memory_bytes', {})).toBeGreaterThan(0);
  });

  it('serves nothing of it on the public port', async () => {
    const response = await platform.request('/metrics');
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain('platform_http_requests_total');
  });

  it("serves a subgraph's on its internal port: its requests, its database pool and the membership queues", async () => {
    const text = await scrape(new URL('/metrics', platform.subgraphUrls.membership).href);
    expect(sample(text, 'platform_http_requests_total', { service: 'membership', interface: 'graphql', route: '/graphql', status: '200' })).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'platform_database_pool_connections', { service: 'membership', state: 'total' })).toBeGreaterThan(0);
    expect(sample(text, 'platform_queue_depth', { queue: 'webhooks' })).toBe(0);
    expect(sample(text, 'platform_queue_depth', { queue: 'documents' })).toBe(0);
    expect(sample(text, 'platform_queue_oldest_age_seconds', { queue: 'documents' })).toBe(0);
  });
});
