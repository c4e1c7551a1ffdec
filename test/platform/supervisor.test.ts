import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive } from '../support/supervised-output.js';
import { startSupervisedPlatform, type SupervisedPlatform } from '../support/supervised-platform.js';

/**
 * `npm start`'s topology, run as npm start runs it (platform/supervisor/launch.mjs: build dist/
 * when stale, then the supervisor from it): one process per subgraph and the edge's cluster. A
 * subgraph's process is SIGKILLed; the edge answers around it and /health names it until the
 * supervisor has restarted it; Ctrl-C then stops every process.
 */
let platform: SupervisedPlatform;
let baseUrl: string;
let key: string;

const logLines = () => platform.logLines();
const startedPids = () => platform.startedPids();

const headers = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
async function graphql(query: string) {
  const response = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers: headers(), body: JSON.stringify({ query }) });
  return { status: response.status, body: (await response.json()) as { data?: Record<string, unknown> | null; errors?: { extensions?: { code?: string } }[] } };
}
const rest = (path: string) => fetch(`${baseUrl}/api/v1${path}`, { headers: headers() });
async function health(): Promise<{ status: number; checks: Record<string, string> }> {
  const response = await fetch(`${baseUrl}/health`);
  return { status: response.status, checks: ((await response.json()) as { checks: Record<string, string> }).checks };
}
const LIVE_LIMIT = 40;

/** One request on a connection of its own (no keep-alive), so that requests spread over the edge's workers. */
function getOnNewConnection(url: string, headers: Record<string, string>): Promise<{ status: number; remaining: number }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false }, (response) => {
      response.resume();
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          remaining: Number(response.headers['x-ratelimit-remaining']),
        }),
      );
    });
    request.on('error', reject);
  });
}

// jobPosting is nullable: its null sits beside the membership subgraph's data.
const BOTH = '{ members(limit: 1) { data { id } } jobPosting(id: "00000000-0000-7000-8000-000000000000") { id } }';

beforeAll(async () => {
  platform = await startSupervisedPlatform({ name: 'supervised', env: { RATE_LIMIT_LIVE_PER_MINUTE: String(LIVE_LIMIT) } });
  ({ baseUrl, key } = platform);
}, 300_000);

// A failed test must not leave processes behind.
afterAll(() => platform?.close('SIGKILL'));

describe('npm start: one supervised process per service', () => {
  it('runs each subgraph and the edge workers in processes of their own', async () => {
    const pids = startedPids();
    for (const name of ['membership', 'marketplace', 'inference', 'traceroute', 'gateway', 'gateway worker 1', 'gateway worker 2']) {
      expect(pids.get(name), name).toHaveLength(1);
      expect(alive(pids.get(name)![0]), name).toBe(true);
    }
    expect(new Set([...pids.values()].flat()).size).toBe(7);
    expect(platform.process.output()).toContain('the edge with 2 workers (EDGE_WORKERS)');
    expect((await health()).status).toBe(200);
    const { body } = await graphql(BOTH);
    expect(body.errors).toBeUndefined();
    expect((await rest('/jobs')).status).toBe(200);
  });

  it('holds one rate limit across the edge workers: their counters are shared', async () => {
    const secret = await platform.createKey('limited');
    const answers = [];
    for (let i = 0; i < LIVE_LIMIT + 10; i++) answers.push(await getOnNewConnection(`${baseUrl}/api/v1/members?limit=7`, { authorization: `Bearer ${secret}` }));
    // Both workers served some of them (each logs its requests under its own pid).
    const servedBy = new Set(logLines().filter((line) => line.req?.url === '/api/v1/members?limit=7').map((line) => line.pid));
    expect(servedBy).toEqual(new Set([startedPids().get('gateway worker 1')![0], startedPids().get('gateway worker 2')![0]]));
    // Per-worker counters would let each of the two workers allow the limit.
    expect(answers.filter((a) => a.status === 200)).toHaveLength(LIVE_LIMIT);
    expect(answers.slice(LIVE_LIMIT).every((a) => a.status === 429)).toBe(true);
    expect(answers.slice(0, LIVE_LIMIT).map((a) => a.remaining)).toEqual(Array.from({ length: LIVE_LIMIT }, (_, i) => LIVE_LIMIT - 1 - i));
  });

  it('manages keys through the edge: the membership process creates and revokes them over the edge\'s key store', async () => {
    const created = await graphql('mutation { createApiKey(kind: TEST, name: "supervised") { id secret } }');
    expect(created.body.errors).toBeUndefined();
    const { id, secret } = (created.body.data as { createApiKey: { id: string; secret: string } }).createApiKey;
    const withNew = () => fetch(`${baseUrl}/api/v1/members?limit=1`, { headers: { authorization: `Bearer ${secret}` } });
    expect((await withNew()).status).toBe(200);
    const revoked = await graphql(`mutation { revokeApiKey(id: "${id}") { id } }`);
    expect(revoked.body.errors).toBeUndefined();
    // The edge owns the keys: the revoke it made reaches its own key cache at once.
    expect((await withNew()).status).toBe(401);
  });

  it('answers around a killed subgraph, reports it at /health, and serves it again once restarted, with the same edge', async () => {
    const before = startedPids();
    const marketplacePid = before.get('marketplace')![0];
    process.kill(marketplacePid, 'SIGKILL');
    await platform.waitFor(() => !alive(marketplacePid), 'the marketplace process to die', 10_000);

    // Before the restart (its first backoff is 500 ms, its start takes seconds): partial data.
    const { status, body } = await graphql(BOTH);
    expect(status).toBe(200);
    expect(body.data?.members).toEqual({ data: expect.any(Array) });
    expect(body.data).toHaveProperty('jobPosting', null);
    expect(body.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    const jobs = await rest('/jobs');
    expect(jobs.status).toBe(503);
    expect(((await jobs.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
    expect((await rest('/members')).status).toBe(200);
    const down = await health();
    expect(down.status).toBe(503);
    expect(down.checks.marketplace).toBe('unreachable (ECONNREFUSED)');
    expect(down.checks.membership).toBe('ok');

    // The supervisor saw the kill, logged it with its signal, and starts it again.
    await platform.waitFor(() => logLines().some((line) => line.service === 'marketplace' && line.signal === 'SIGKILL'), 'the exit to be logged', 10_000);
    await platform.waitFor(async () => (await health()).status === 200, 'the marketplace to be back', 180_000);
    const after = startedPids();
    expect(after.get('marketplace')).toHaveLength(2);
    expect(alive(after.get('marketplace')![1])).toBe(true);
    const again = await graphql(BOTH);
    expect(again.body.errors).toBeUndefined();
    expect(again.body.data).toEqual({ members: { data: expect.any(Array) }, jobPosting: null });
    expect((await rest('/jobs')).status).toBe(200);
    // The edge and the other subgraphs kept running through it.
    for (const name of ['gateway', 'gateway worker 1', 'gateway worker 2', 'membership', 'inference', 'traceroute']) {
      expect(after.get(name), name).toEqual(before.get(name));
      expect(alive(after.get(name)![0]), name).toBe(true);
    }
  }, 240_000);

  it('stops every process on Ctrl-C and exits 0', async () => {
    const pids = [...startedPids().values()].flat();
    process.kill(-platform.process.child.pid!, 'SIGINT');
    expect(await platform.process.exited).toBe(0);
    // Every child was stopped and reaped before the supervisor exited.
    expect(pids.filter(alive)).toEqual([]);
    await expect(fetch(`${baseUrl}/health`)).rejects.toThrow();
  }, 60_000);
});
