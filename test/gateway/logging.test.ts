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
