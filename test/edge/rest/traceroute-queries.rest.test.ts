import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

/**
 * The queries RIPE Atlas users make, over REST (the spec's snake_case) and over GraphQL through the
 * same edge: the new filters, stats that honour every filter, the export's columns and cursor, and
 * the source record of a trace.
 */
const DATA = path.resolve(import.meta.dirname, '../../fixtures/traceroute');
const FILES = ['ripe-atlas-traceroutes.jsonl', 'ripe-atlas-quirks.jsonl', 'ripe-atlas-quirks-constructed.jsonl', 'scamper-lab.jsonl'];
const WINDOW = 'since=2000-01-01T00:00:00Z&until=2100-01-01T00:00:00Z';

type Json = Record<string, any>;
let platform: TestPlatform;
let key: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  key = await platform.issueKey('researcher', 'traceroute', { hourlyLimit: 10_000, dailyLimit: 10_000 });
  const admin = await platform.issueKey('operators', 'admin');
  for (const file of FILES) {
    const response = await platform.request('/graphql', {
      method: 'POST',
      key: admin,
      json: { query: 'mutation($c: String!) { importTraces(content: $c) { stored skipped { reason } } }', variables: { c: await readFile(`${DATA}/${file}`, 'utf8') } },
    });
    const body = (await response.json()) as Json;
    expect(body.data.importTraces.skipped, file).toEqual([]);
  }
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

const get = (url: string) => platform.request(url, { headers: { 'x-api-key': key } });
const getJson = async (url: string, status = 200) => {
  const response = await get(url);
  const body = (await response.json()) as Json;
  expect(response.status, JSON.stringify(body)).toBe(status);
  return body;
};
const graphql = async (query: string, variables: Json = {}) => {
  const response = await platform.request('/graphql', { method: 'POST', headers: { 'x-api-key': key }, key, json: { query, variables } });
  return (await response.json()) as Json;
};

describe('GET /v1/public/traces with the filters Atlas users search by', () => {
  it.each([
    ['msm_id=29792007', (t: Json) => t.msm_id === 29792007, 14],
    ['probe_id=60101', (t: Json) => t.probe_id === 60101, 1],
    ['af=6', (t: Json) => t.af === 6, 2],
    ['protocol=UDP', (t: Json) => t.protocol === 'UDP', 0],
    ['target_asn=15169', (t: Json) => t.target_asn === 15169, 0],
    ['hop_ip=10.33.2.2', (t: Json) => t.hops.some((h: Json) => h.responders.some((r: Json) => r.ip === '10.33.2.2')), 0],
    ['hop_ip=2400:FC00:1:0:0:0:0:5', (t: Json) => t.hops.some((h: Json) => h.responders.some((r: Json) => r.ip === '2400:fc00:1::5')), 1],
    ['hop_asn=1200', (t: Json) => t.hops.some((h: Json) => h.responders.some((r: Json) => r.asn === 1200)), 1],
  ])('%s', async (query, keep, atLeast) => {
    const everything = (await getJson(`/v1/public/traces?${WINDOW}&limit=200&include_hops=true`)).data as Json[];
    const found = (await getJson(`/v1/public/traces?${WINDOW}&limit=200&include_hops=true&${query}`)).data as Json[];
    const wanted = everything.filter(keep).map((t) => t.trace_id);
    expect(wanted.length).toBeGreaterThanOrEqual(Math.max(1, atLeast));
    expect(wanted.length).toBeLessThan(everything.length);
    expect(found.map((t) => t.trace_id)).toEqual(wanted);
  });

  it('matches cities whatever their case and an IPv6 target however it is spelled', async () => {
    const ipv6 = (await getJson(`/v1/public/traces?${WINDOW}&target_ip=2001:4860:4860:0:0:0:0:8844`)).data as Json[];
    expect(ipv6.map((t) => t.target_ip)).toEqual(['2001:4860:4860::8844']);
    const everything = (await getJson(`/v1/public/traces?${WINDOW}&limit=200`)).data as Json[];
    const city = everything.find((t) => t.probe_city)!.probe_city as string;
    const exact = (await getJson(`/v1/public/traces?${WINDOW}&probe_city=${encodeURIComponent(city)}`)).data as Json[];
    const shouted = (await getJson(`/v1/public/traces?${WINDOW}&probe_city=${encodeURIComponent(city.toUpperCase())}`)).data as Json[];
    expect(exact.length).toBeGreaterThan(0);
    expect(shouted.map((t) => t.trace_id)).toEqual(exact.map((t) => t.trace_id));
  });

  it.each([
    ['af', 'af=5'], ['af', 'af=four'], ['protocol', 'protocol=SCTP'], ['msm_id', 'msm_id=-1'], ['hop_ip', 'hop_ip=router.example'],
    ['hop_asn', 'hop_asn=AS1200'], ['target_asn', 'target_asn=99999999999'],
  ])('answers 400 invalid_parameter naming %s', async (param, query) => {
    const body = await getJson(`/v1/public/traces?${query}`, 400);
    expect(body).toMatchObject({ error: 'invalid_parameter', param });
    expect(body.message).not.toMatch(/\b(msm|probe|target|hop)[A-Z]/);
  });

  it('takes the same filters over GraphQL', async () => {
    const body = await graphql('query { traces(since: "2000-01-01T00:00:00Z", until: "2100-01-01T00:00:00Z", af: 6, hopIp: "2400:FC00:1::5") { data { msmId probeId af protocol } } }');
    expect(body.errors).toBeUndefined();
    expect(body.data.traces.data).toEqual([{ msmId: 5154, probeId: 60104, af: 6, protocol: 'UDP' }]);
  });
});

describe('GET /v1/public/stats', () => {
  it.each(['msm_id=29792007', 'af=6', 'protocol=ICMP', 'hop_asn=1200', 'status=failed&probe_country=PK', 'target_domain=google', 'min_anomaly=0.1'])(
    'counts what the search with %s finds',
    async (query) => {
      const found = (await getJson(`/v1/public/traces?${WINDOW}&limit=200&${query}`)).data as Json[];
      expect(found.length).toBeGreaterThan(0);
      const stats = await getJson(`/v1/public/stats?${WINDOW}&${query}`);
      expect(stats.total).toBe(found.length);
      const byStatus: Record<string, number> = {};
      for (const t of found) byStatus[t.status] = (byStatus[t.status] ?? 0) + 1;
      expect(Object.fromEntries(stats.by_status.map((r: Json) => [r.key, r.count]))).toEqual(byStatus);
    },
  );

  it('refuses an unknown parameter rather than counting everything', async () => {
    expect(await getJson('/v1/public/stats?hop=1.2.3.4', 400)).toMatchObject({ error: 'unknown_parameter', param: 'hop' });
  });

  it('takes the same filters over GraphQL', async () => {
    const body = await graphql('query { traceStats(since: "2000-01-01T00:00:00Z", until: "2100-01-01T00:00:00Z", msmId: 29792007) { total } }');
    expect(body.data.traceStats.total).toBe(14);
  });
});

describe('GET /v1/public/traces/export', () => {
  it('writes msm_id, probe_id, af and protocol, and takes the new filters', async () => {
    const response = await get(`/v1/public/traces/export?format=csv&include_hops=false&${WINDOW}&af=6`);
    expect(response.status).toBe(200);
    const [header, ...rows] = (await response.text()).trim().split('\n').map((line) => line.split(','));
    expect(header.slice(0, 6)).toEqual(['trace_id', 'measured_at', 'msm_id', 'probe_id', 'af', 'protocol']);
    expect(rows.map((r) => r.slice(2, 6))).toEqual([['5154', '60104', '6', 'UDP'], ['24304870', '1004666', '6', 'UDP']]);
    expect(rows.every((r) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(r[1]))).toBe(true);
  });

  it('continues with the cursor through the edge, in JSON and in CSV', async () => {
    const all = ((await getJson(`/v1/public/traces?${WINDOW}&limit=200`)).data as Json[]).map((t) => t.trace_id);
    expect(all.length).toBeGreaterThan(20);
    const json: string[] = [];
    let cursor: string | null = null;
    do {
      const body: Json = await getJson(`/v1/public/traces/export?${WINDOW}&include_hops=false&limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      json.push(...body.data.map((t: Json) => t.trace_id));
      cursor = body.nextCursor;
    } while (cursor);
    expect(json).toEqual(all);
    const csv: string[] = [];
    do {
      const response = await get(`/v1/public/traces/export?format=csv&${WINDOW}&include_hops=false&limit=9${cursor ? `&cursor=${cursor}` : ''}`);
      csv.push(...(await response.text()).trim().split('\n').slice(1).map((line) => line.split(',')[0]));
      cursor = response.headers.get('x-next-cursor');
    } while (cursor);
    expect(csv).toEqual(all);
  });

  it('refuses a parameter it does not take', async () => {
    expect(await getJson('/v1/public/traces/export?hop=1.2.3.4', 400)).toMatchObject({ error: 'unknown_parameter', param: 'hop' });
  });
});

describe('GET /v1/public/traces/{trace_id}/raw', () => {
  it('answers the record exactly as it was imported, and so does traceRecord over GraphQL', async () => {
    const [line] = (await readFile(`${DATA}/ripe-atlas-quirks.jsonl`, 'utf8')).split('\n');
    const [trace] = (await getJson(`/v1/public/traces?${WINDOW}&msm_id=5004&probe_id=853`)).data as Json[];
    const body = await getJson(`/v1/public/traces/${trace.trace_id}/raw`);
    expect(body).toEqual({ trace_id: trace.trace_id, source: 'ripe_atlas', record: line });
    const graph = await graphql('query($id: ID!) { traceRecord(id: $id) { traceId source record } }', { id: trace.trace_id });
    expect(graph.data.traceRecord).toEqual({ traceId: trace.trace_id, source: 'ripe_atlas', record: line });
  });

  it('answers 404 not_found for an unknown trace, and for one whose record was not kept with a message that says so', async () => {
    expect(await getJson('/v1/public/traces/0190f000-0000-7000-8000-000000000000/raw', 404)).toMatchObject({ error: 'not_found' });
    expect(await getJson('/v1/public/traces/nope/raw', 404)).toMatchObject({ error: 'not_found' });
    const [older] = (await getJson(`/v1/public/traces?${WINDOW}&msm_id=5006`)).data as Json[];
    const client = new pg.Client({ connectionString: platform.databaseUrl });
    await client.connect();
    try {
      await client.query('update traceroute.trace set source_record = null where id = $1', [older.trace_id]);
    } finally {
      await client.end();
    }
    const refused = await getJson(`/v1/public/traces/${older.trace_id}/raw`, 404);
    expect(refused).toMatchObject({ error: 'not_found', message: expect.stringMatching(/imported before source records were kept/) });
  });
});

describe('provenance', () => {
  it('says where each figure of a trace came from, in snake_case over REST', async () => {
    const [trace] = (await getJson(`/v1/public/traces?${WINDOW}&msm_id=5154`)).data as Json[];
    const one = await getJson(`/v1/public/traces/${trace.trace_id}`);
    expect(Object.keys(one.provenance).sort()).toEqual(['hop_asn', 'hop_location', 'probe_asn', 'probe_city', 'probe_coordinates', 'probe_country', 'target_asn', 'target_location']);
    expect(one.provenance.probe_country).toMatch(/^GeoLite2 City \d{4}-\d\d-\d\d$/);
    expect(one.provenance.probe_asn).toMatch(/^ip-location-db ASN \d{4}-\d\d-\d\d$/);
  });
});

describe('a traceroute key over GraphQL, as its spec gives it', () => {
  const ask = async (headers: Record<string, string>) => {
    const response = await platform.request('/graphql', { method: 'POST', headers, json: { query: 'query { traceStats(hours: 1) { total } }' } });
    return { status: response.status, body: (await response.json()) as Json };
  };

  it('is accepted in X-API-Key', async () => {
    const { status, body } = await ask({ 'x-api-key': key });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.traceStats).toEqual({ total: expect.any(Number) });
  });

  it("is refused in X-API-Key with the spec's reasons: invalid_key, key_disabled, key_expired", async () => {
    const account = `graphql-refusals-${Date.now()}`;
    const disabled = await platform.identity().createKey({ account, kind: 'traceroute' });
    const expired = await platform.identity().createKey({ account, kind: 'traceroute' });
    const live = await platform.issueKey(account, 'live');
    await platform.identity().disableKey(disabled.id);
    await platform.identity().expireKey(expired.id, new Date(Date.now() - 1000));
    // A key of another kind sent as a traceroute key is, for this API, one it does not know.
    for (const [secret, reason] of [['tr_nonsense', 'invalid_key'], [disabled.secret, 'key_disabled'], [expired.secret, 'key_expired'], [live, 'invalid_key']] as const) {
      const { status, body } = await ask({ 'x-api-key': secret });
      expect(status, reason).toBe(403);
      expect(body.errors[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason });
    }
  });
});

describe('the hourly quota', () => {
  it('is not spent by a request refused with 400', async () => {
    const limited = await platform.issueKey(`quota-${Date.now()}`, 'traceroute', { hourlyLimit: 3, dailyLimit: 100 });
    const call = (query: string) => platform.request(`/v1/public/traces?${query}`, { headers: { 'x-api-key': limited } });
    const first = await call('limit=1');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    for (const bad of ['limit=abc', 'af=5', 'hop=1', 'since=yesterday', 'protocol=SCTP']) {
      const refused = await call(bad);
      expect(refused.status, bad).toBe(400);
      await refused.arrayBuffer();
    }
    // Over the export and GraphQL too.
    expect((await platform.request('/v1/public/traces/export?limit=0', { headers: { 'x-api-key': limited } })).status).toBe(400);
    const graph = await platform.request('/graphql', { method: 'POST', headers: { 'x-api-key': limited }, json: { query: '{ traces(af: "five") { data { traceId } } }' } });
    expect(graph.status).toBe(400);
    const second = await call('limit=1');
    expect(second.status).toBe(200);
    expect(second.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await call('limit=1')).status).toBe(200);
    expect((await call('limit=1')).status).toBe(429);
  });
});
