import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

const lines: Record<string, any>[] = [];
let platform: TestPlatform;
beforeAll(async () => {
  platform = await startTestPlatform({}, { level: 'info', destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
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
