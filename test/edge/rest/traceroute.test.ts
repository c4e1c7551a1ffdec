import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MikroORM } from '@mikro-orm/postgresql';
import { migrate, openOrm } from '../../../core/orm.js';
import { sharedIpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';
import { SyntheticTraceGenerator } from '../../../subgraphs/traceroute/ingest/synthetic-generator.js';
import { TraceImporter } from '../../../subgraphs/traceroute/ingest/trace-importer.js';
import { tracerouteOrmOptions } from '../../../subgraphs/traceroute/mikro-orm.config.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

let platform: TestPlatform;
let orm: MikroORM;
let key: string;

beforeAll(async () => {
  platform = await startTestPlatform();
  orm = await openOrm({ clientUrl: platform.databaseUrl, ...tracerouteOrmOptions });
  await migrate(orm, platform.databaseUrl, tracerouteOrmOptions.schema);
  const generator = new SyntheticTraceGenerator(await sharedIpEnricher(), 11);
  await new TraceImporter(orm.em.fork(), await sharedIpEnricher()).store(generator.generate(300, { days: 3 }));
  key = await platform.issueKey('researcher', 'traceroute', { hourlyLimit: 10_000, dailyLimit: 10_000 });
}, 60_000);

afterAll(async () => {
  await orm?.close(true);
  await platform?.close();
});

const get = (path: string) => platform.request(path, { headers: { 'x-api-key': key } });

describe('GET /v1/public/traces', () => {
  it('answers the GraphQL page with snake_case trace fields and the envelope', async () => {
    const response = await get('/v1/public/traces?limit=5');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: Record<string, unknown>[]; page: number; limit: number; hasMore: boolean; nextCursor: string };
    expect(body).toMatchObject({ page: 1, limit: 5, hasMore: true, nextCursor: expect.any(String) });
    expect(body.data).toHaveLength(5);
    expect(Object.keys(body.data[0])).toEqual(expect.arrayContaining(['trace_id', 'direction', 'probe_city', 'probe_country', 'probe_asn', 'target_domain', 'target_ip', 'target_city', 'anomaly_score', 'status', 'measured_at']));
    expect(body.data[0].hops).toBeNull();
    const next = (await (await get(`/v1/public/traces?limit=5&cursor=${body.nextCursor}`)).json()) as { data: { trace_id: string }[] };
    const second = (await (await get('/v1/public/traces?limit=5&page=2')).json()) as { data: { trace_id: string }[] };
    expect(next.data.map((t) => t.trace_id)).toEqual(second.data.map((t) => t.trace_id));
  });

  it('applies the spec filters from the query string', async () => {
    const response = await get('/v1/public/traces?direction=outside_to_pk&status=completed&min_anomaly=0&probe_country=DE&hours=96&limit=200&include_hops=true');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { direction: string; status: string; probe_country: string; hops: unknown[] }[] };
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data.every((t) => t.direction === 'outside_to_pk' && t.status === 'completed' && t.probe_country === 'DE' && t.hops.length > 0)).toBe(true);
  });

  it.each([
    ['limit', 'limit=abc'], ['limit', 'limit=500'], ['hours', 'hours=1000'], ['direction', 'direction=sideways'],
    ['min_anomaly', 'min_anomaly=2'], ['min_anomaly', 'min_anomaly=high'], ['since', 'since=yesterday'], ['status', 'status=done'],
    ['probe_asn', 'probe_asn=AS17557'], ['include_hops', 'include_hops=maybe'], ['page', 'page=0'],
    // Checked in the subgraph under the graph's camelCase names, answered under the spec's.
    ['target_ip', 'target_ip=300.1.1.1'], ['probe_country', 'probe_country=PAK'], ['probe_city', 'probe_city=%00'],
    ['min_anomaly', 'min_anomaly=-0.5'], ['cursor', 'cursor=garbage'],
  ])('answers 400 invalid_parameter naming %s', async (param, query) => {
    const response = await get(`/v1/public/traces?${query}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { param: string; message: string };
    expect(body).toMatchObject({ error: 'invalid_parameter', param });
    expect(body.message).not.toMatch(/\b(probe|target|min|include)[A-Z]/);
  });

  it('keeps the snake_case names it was published with while the graph is camelCase', async () => {
    const body = (await (await get('/v1/public/traces?limit=1&include_hops=true&probe_country=PK&hours=96')).json()) as { data: Record<string, any>[] };
    expect(Object.keys(body).sort()).toEqual(['data', 'hasMore', 'limit', 'nextCursor', 'page']);
    const [trace] = body.data;
    expect(Object.keys(trace).sort()).toEqual([
      'af', 'anomaly', 'anomaly_score', 'as_path', 'created_at', 'direction', 'error', 'hop_count', 'hops', 'loss', 'measured_at',
      'msm_id', 'probe_as_name', 'probe_asn', 'probe_city', 'probe_country', 'probe_id', 'probe_ip', 'probe_latitude',
      'probe_longitude', 'protocol', 'provenance', 'responding_hops', 'rtt_ms', 'status', 'stop_reason', 'target_as_name', 'target_asn', 'target_city',
      'target_country', 'target_domain', 'target_ip', 'target_latitude', 'target_longitude', 'trace_id',
    ]);
    expect(trace.probe_country).toBe('PK');
    expect(Object.keys(trace.anomaly).sort()).toEqual(['as_path_change', 'baseline_rtt_ms', 'baseline_samples', 'incomplete', 'leaves_country', 'loss', 'new_asn', 'rtt_inflation']);
    expect(Object.keys(trace.hops[0]).sort()).toEqual([
      'as_name', 'asn', 'city', 'country', 'duplicates', 'errors', 'hop', 'hostname', 'ip', 'ixp', 'late', 'latitude', 'longitude', 'loss',
      'mpls', 'other_destination', 'private', 'received', 'responders', 'rtt_avg', 'rtts', 'sent', 'stray_replies',
    ]);
    const responder = trace.hops.flatMap((h: Record<string, any>) => h.responders)[0];
    expect(Object.keys(responder).sort()).toEqual([
      'as_name', 'asn', 'city', 'country', 'errors', 'hostname', 'ip', 'ixp', 'latitude', 'longitude', 'mpls', 'private', 'received', 'rtt_avg', 'rtts',
    ]);
    const stats = (await (await get('/v1/public/stats?hours=96')).json()) as Record<string, any>;
    expect(Object.keys(stats).sort()).toEqual(['anomaly_distribution', 'by_direction', 'by_status', 'per_hour', 'since', 'top_asns', 'top_probe_cities', 'top_target_cities', 'total', 'until']);
    expect(Object.keys(stats.top_asns[0]).sort()).toEqual(['as_name', 'asn', 'count']);
    // The same trace over GraphQL, camelCase.
    const graphql = await platform.request('/graphql', {
      method: 'POST',
      headers: { 'x-api-key': key },
      key,
      json: { query: 'query($id: ID!) { trace(id: $id) { traceId probeIp anomalyScore hops { rttAvg asName } anomaly { rttInflation } } }', variables: { id: trace.trace_id } },
    });
    const { data } = (await graphql.json()) as { data: { trace: Record<string, any> } };
    expect(data.trace).toMatchObject({ traceId: trace.trace_id, probeIp: trace.probe_ip, anomalyScore: trace.anomaly_score });
    expect(data.trace.hops[0]).toEqual({ rttAvg: trace.hops[0].rtt_avg, asName: trace.hops[0].as_name });
  });
});

describe('GET /v1/public/traces/{trace_id}', () => {
  it('answers the trace with hops, geo, ASN data and the anomaly components', async () => {
    const [first] = ((await (await get('/v1/public/traces?limit=1')).json()) as { data: { trace_id: string }[] }).data;
    const response = await get(`/v1/public/traces/${first.trace_id}`);
    expect(response.status).toBe(200);
    const trace = (await response.json()) as { trace_id: string; hops: Record<string, unknown>[]; anomaly: Record<string, unknown> };
    expect(trace.trace_id).toBe(first.trace_id);
    expect(trace.hops.length).toBeGreaterThan(1);
    expect(Object.keys(trace.hops[1])).toEqual(expect.arrayContaining(['hop', 'ip', 'rtts', 'loss', 'country', 'city', 'latitude', 'longitude', 'asn', 'as_name']));
    expect(Object.keys(trace.anomaly)).toEqual(expect.arrayContaining(['rtt_inflation', 'as_path_change', 'new_asn', 'leaves_country', 'loss', 'incomplete']));
  });

  it('answers 404 not_found for an unknown or malformed id', async () => {
    for (const id of ['0190f000-0000-7000-8000-000000000000', 'nope']) {
      const response = await get(`/v1/public/traces/${id}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: 'not_found' });
    }
  });
});

describe('GET /v1/public/stats', () => {
  it('answers counts over the chosen window', async () => {
    const response = await get('/v1/public/stats?hours=96');
    expect(response.status).toBe(200);
    const stats = (await response.json()) as { total: number; by_direction: { key: string; count: number }[]; per_hour: unknown[]; top_asns: unknown[] };
    expect(stats.total).toBe(300);
    expect(stats.by_direction.reduce((n, r) => n + r.count, 0)).toBe(300);
    expect(stats.per_hour.length).toBeGreaterThan(0);
    expect(stats.top_asns.length).toBeGreaterThan(0);
    expect((await get('/v1/public/stats?hours=0')).status).toBe(400);
    // Year 0: a JavaScript date PostgreSQL refuses, once a 500 (found by test/edge/rest-paths.property.test.ts).
    const yearZero = await get('/v1/public/stats?since=0000-01-01T00:00:00Z');
    expect(yearZero.status).toBe(400);
    expect(await yearZero.json()).toMatchObject({ error: 'invalid_parameter', param: 'since' });
  });
});
