import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../../platform/identity/index.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { sharedIpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';
import { createTracerouteSubgraph } from '../../../subgraphs/traceroute/index.js';
import { readFileRecords, readTextRecords } from '../../../subgraphs/traceroute/ingest/record-reader.js';
import { SyntheticTraceGenerator } from '../../../subgraphs/traceroute/ingest/synthetic-generator.js';
import { TraceImporter } from '../../../subgraphs/traceroute/ingest/trace-importer.js';
import { TraceSource } from '../../../subgraphs/traceroute/trace/trace-source.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

/** Real RIPE Atlas and scamper2 samples kept in the repository (see test/fixtures/traceroute/README.md). */
const DATA = path.resolve(import.meta.dirname, '../../fixtures/traceroute');
const sample = (name: string) => `${DATA}/${name}`;
const NOW = new Date();

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;
const statements: string[] = [];
const reader = principalFor('reader', 'traceroute');

const importer = async () => new TraceImporter(subgraph.orm.em.fork(), await sharedIpEnricher());

const TRACE_FIELDS = `trace_id measured_at direction status probe_city probe_country probe_asn target_domain target_ip
  target_city anomaly_score`;
const TRACES = `query($direction: TraceDirection, $probe_city: String, $probe_country: String, $probe_asn: Int,
  $target_domain: String, $target_ip: String, $target_city: String, $min_anomaly: Float, $status: TraceStatus,
  $since: DateTime, $until: DateTime, $hours: Int, $page: Int, $limit: Int, $include_hops: Boolean, $cursor: String) {
  traces(direction: $direction, probe_city: $probe_city, probe_country: $probe_country, probe_asn: $probe_asn,
    target_domain: $target_domain, target_ip: $target_ip, target_city: $target_city, min_anomaly: $min_anomaly,
    status: $status, since: $since, until: $until, hours: $hours, page: $page, limit: $limit,
    include_hops: $include_hops, cursor: $cursor) {
    data { ${TRACE_FIELDS} hops { hop } }
    page limit hasMore nextCursor
  }
}`;

interface TraceSummary {
  trace_id: string;
  measured_at: Date;
  direction: string;
  status: string;
  probe_city: string | null;
  probe_country: string | null;
  probe_asn: number | null;
  target_domain: string | null;
  target_ip: string;
  target_city: string | null;
  anomaly_score: number;
  hops: { hop: number }[] | null;
}
interface TracesData {
  traces: { data: TraceSummary[]; page: number; limit: number; hasMore: boolean; nextCursor: string | null };
}

async function search(variables: Record<string, unknown>) {
  return run<TracesData>(subgraph, reader, TRACES, variables);
}

/** Every trace a search finds, following nextCursor. */
async function all(variables: Record<string, unknown>): Promise<TraceSummary[]> {
  const found: TraceSummary[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const result: ExecutionResult<TracesData> = await search({ ...variables, limit: 200, cursor });
    expect(result.errors).toBeUndefined();
    found.push(...result.data!.traces.data);
    cursor = result.data!.traces.nextCursor;
    if (!cursor) break;
  }
  return found;
}

const order = (a: TraceSummary, b: TraceSummary) =>
  b.measured_at.getTime() - a.measured_at.getTime() || (a.trace_id < b.trace_id ? 1 : a.trace_id > b.trace_id ? -1 : 0);

let synthetic: TraceSummary[];

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  subgraph = await createTracerouteSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, identityOrm, onQuery: (sql) => statements.push(sql) });
  const generator = new SyntheticTraceGenerator(await sharedIpEnricher(), 42);
  const report = await (await importer()).store(generator.generate(400, { days: 3, now: NOW }));
  expect(report.stored).toBe(400);
  synthetic = await all({ hours: 96 });
}, 60_000);

afterAll(async () => {
  await subgraph?.close();
  await identityOrm?.close(true);
  await db?.drop();
});

describe('import of the real samples', () => {
  it('stores every RIPE Atlas traceroute of the sample, then nothing more on a second import', async () => {
    const first = await (await importer()).run(readFileRecords(sample('ripe-atlas-traceroutes.jsonl')));
    expect(first).toEqual({ read: 14, stored: 14, duplicates: 0, skipped: [] });
    const again = await (await importer()).run(readFileRecords(sample('ripe-atlas-traceroutes.jsonl')));
    expect(again).toEqual({ read: 14, stored: 0, duplicates: 14, skipped: [] });
    const stored = await all({ since: '2021-04-22T00:00:00Z', until: '2021-04-23T00:00:00Z' });
    expect(stored).toHaveLength(14);
  });

  it('stores the scamper2 samples: one trace per file, the metadata and cycle lines are not records to skip', async () => {
    const complex = await (await importer()).run(readFileRecords(sample('scamper2-valid-complex.jsonl')));
    expect(complex).toMatchObject({ read: 1, stored: 1, skipped: [] });
    const simple = await (await importer()).run(readFileRecords(sample('scamper2-valid-simple-json.jsonl')));
    expect(simple).toMatchObject({ read: 1, stored: 1, skipped: [] });
    // The star sample is the complex trace (same source, target and start) with its addresses removed.
    const star = await (await importer()).run(readFileRecords(sample('scamper2-valid-star.jsonl')));
    expect(star).toMatchObject({ read: 1, stored: 0, duplicates: 1, skipped: [] });
  });

  it('reads a JSON array and the {results: [...]} wrapper like JSON lines', async () => {
    const lines = readFileSync(sample('ripe-atlas-traceroutes.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const shifted = lines.slice(0, 3).map((r) => ({ ...r, msm_id: 1, timestamp: r.timestamp + 1 }));
    const array = await (await importer()).run(readTextRecords(JSON.stringify(shifted, null, 2)));
    expect(array).toEqual({ read: 3, stored: 3, duplicates: 0, skipped: [] });
    const wrapped = await (await importer()).run(readTextRecords(JSON.stringify({ results: shifted.map((r) => ({ ...r, msm_id: 2 })) })));
    expect(wrapped).toEqual({ read: 3, stored: 3, duplicates: 0, skipped: [] });
  });

  it('reports pings, DNS results and malformed records with their position and stores the rest', async () => {
    const good = JSON.parse(readFileSync(sample('ripe-atlas-traceroutes.jsonl'), 'utf8').split('\n')[0]);
    const content = [
      JSON.stringify({ ...good, msm_id: 3 }),
      JSON.stringify({ type: 'ping', msm_id: 5, prb_id: 1, timestamp: 1, avg: 2, result: [{ rtt: 1 }] }),
      JSON.stringify({ type: 'dns', msm_id: 6, prb_id: 1, timestamp: 1, result: { abuf: 'x' } }),
      '{"msm_id": 7, "prb_id": ',
      JSON.stringify({ ...good, msm_id: 8, dst_addr: 'nowhere' }),
      JSON.stringify({ ...good, msm_id: 9, result: [{ hop: 'one', result: [] }] }),
      JSON.stringify({ ...good, msm_id: 10, result: [{ hop: 1, result: [{ from: 'not-an-ip', rtt: 1 }] }] }),
      JSON.stringify([1, 2]),
      JSON.stringify({ ...good, msm_id: 11 }),
    ].join('\n');
    const report = await (await importer()).run(readTextRecords(content));
    expect(report.stored).toBe(2);
    expect(report.skipped).toEqual([
      { position: 'line 2', reason: 'a RIPE Atlas "ping" result, not a traceroute' },
      { position: 'line 3', reason: 'a RIPE Atlas "dns" result, not a traceroute' },
      { position: 'line 4', reason: expect.stringMatching(/^not JSON/) },
      { position: 'line 5', reason: 'dst_addr is missing or not an IP address' },
      { position: 'line 6', reason: 'hop #1: "hop" must be an integer from 0 to 255' },
      { position: 'line 7', reason: 'hop #1: "not-an-ip" is not an IP address' },
      { position: 'line 8', reason: 'not a JSON object' },
    ]);
  });

  it('parses err, late, ICMP extensions, hop-level errors, IPv6 and hop 255 into the stored hops', async () => {
    const record = {
      fw: 4790, af: 6, type: 'traceroute', msm_id: 12, prb_id: 7, timestamp: 1_700_000_000, proto: 'UDP',
      from: '2400:fc00::10', src_addr: '2400:fc00::10', dst_addr: '2001:4860:4860::8888', dst_name: 'dns.google',
      result: [
        { hop: 1, result: [{ from: 'fe80::1', rtt: 0.5, size: 96, ttl: 64 }, { x: '*' }, { from: 'fe80::1', late: 1, size: 96, ttl: 64 }] },
        { hop: 2, error: 'sendto failed: Network is unreachable' },
        { hop: 3, result: [{ from: '2001:4860::1', rtt: 20.1, ttl: 60, icmpext: { version: 2, rfc4884: 0, obj: [{ class: 1, type: 1, mpls: [{ exp: 0, label: 24001, s: 1, ttl: 1 }] }] } }] },
        { hop: 4, result: [{ from: '2001:4860:4860::8888', rtt: 21.5, err: 'A' }] },
        { hop: 255, result: [{ x: '*' }, { x: '*' }, { x: '*' }] },
      ],
    };
    const report = await (await importer()).run(readTextRecords(JSON.stringify(record)));
    expect(report).toMatchObject({ stored: 1, skipped: [] });
    const [found] = await all({ target_domain: 'dns.google', since: '2023-11-01T00:00:00Z', until: '2023-12-01T00:00:00Z' });
    const trace = await run<{ trace: Record<string, unknown> & { hops: Record<string, unknown>[] } }>(
      subgraph,
      reader,
      `query($id: ID!) { trace(id: $id) { af protocol status probe_country hops { hop ip rtts late errors private mpls country asn } } }`,
      { id: found.trace_id },
    );
    expect(trace.errors).toBeUndefined();
    const t = trace.data!.trace;
    expect(t).toMatchObject({ af: 6, protocol: 'UDP', probe_country: 'PK' });
    // The target answered with an unreachable error only: the trace did not complete.
    expect(t.status).toBe('failed');
    expect(t.hops.map((h) => h.hop)).toEqual([1, 2, 3, 4, 255]);
    expect(t.hops[0]).toMatchObject({ ip: 'fe80::1', rtts: [0.5, null, null], late: 1, private: true, country: null });
    expect(t.hops[1]).toMatchObject({ ip: null, rtts: [], errors: ['sendto failed: Network is unreachable'] });
    expect(t.hops[2]).toMatchObject({ ip: '2001:4860::1', mpls: [24001], asn: 15169, private: false });
    expect(t.hops[3]).toMatchObject({ errors: ['A'] });
    expect(t.hops[4]).toMatchObject({ ip: null, rtts: [null, null, null] });
  });
});

describe('traces', () => {
  it('returns the 50 newest traces of the last 168 hours by default, with the envelope', async () => {
    const result = await search({});
    expect(result.errors).toBeUndefined();
    const page = result.data!.traces;
    expect(page).toMatchObject({ page: 1, limit: 50, hasMore: true, nextCursor: expect.any(String) });
    expect(page.data.map((t) => t.trace_id)).toEqual([...synthetic].sort(order).slice(0, 50).map((t) => t.trace_id));
    expect(page.data.every((t) => t.hops === null)).toBe(true);
  });

  it('serves the same order by page number and by cursor, without repeats', async () => {
    const byPage: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const result = await search({ hours: 96, limit: 30, page });
      byPage.push(...result.data!.traces.data.map((t) => t.trace_id));
    }
    expect(byPage).toEqual(synthetic.slice(0, 120).map((t) => t.trace_id));
    expect(new Set(synthetic.map((t) => t.trace_id)).size).toBe(400);
    expect(synthetic.slice().sort(order)).toEqual(synthetic);
  });

  it('breaks ties of equal measurement times by trace_id across pages', async () => {
    const at = new Date(NOW.getTime() - 10 * 86_400_000);
    const base = (await all({ hours: 96 }))[0];
    const generator = new SyntheticTraceGenerator(await sharedIpEnricher(), 7);
    const items = [...generator.generate(5, { now: at, days: 1 })].map((item, i) => ({
      ...item,
      trace: { ...item.trace, measuredAt: at, measurementKey: `tie:${i}`, source: TraceSource.SYNTHETIC },
    }));
    await (await importer()).store(items);
    const tied = (await all({ since: at.toISOString(), until: new Date(at.getTime() + 1).toISOString() }));
    expect(tied).toHaveLength(5);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const result: ExecutionResult<TracesData> = await search({ since: at.toISOString(), until: new Date(at.getTime() + 1).toISOString(), limit: 2, cursor });
      paged.push(...result.data!.traces.data.map((t) => t.trace_id));
      cursor = result.data!.traces.nextCursor;
    } while (cursor);
    expect(paged).toEqual(tied.map((t) => t.trace_id).sort().reverse());
    expect(base).toBeDefined();
  });

  const filters: [string, Record<string, unknown>, (t: TraceSummary) => boolean][] = [
    ['direction', { direction: 'outside_to_pk' }, (t) => t.direction === 'outside_to_pk'],
    ['status', { status: 'failed' }, (t) => t.status === 'failed'],
    ['probe_country', { probe_country: 'pk' }, (t) => t.probe_country === 'PK'],
    ['probe_city', { probe_city: 'Karachi' }, (t) => t.probe_city === 'Karachi'],
    ['probe_asn', { probe_asn: 17557 }, (t) => t.probe_asn === 17557],
    ['target_domain (partial, any case)', { target_domain: 'DAWN' }, (t) => (t.target_domain ?? '').includes('dawn')],
    ['target_city', { target_city: 'Lahore' }, (t) => t.target_city === 'Lahore'],
    ['min_anomaly', { min_anomaly: 0.3 }, (t) => t.anomaly_score >= 0.3],
    ['several at once', { direction: 'pk_to_outside', status: 'completed', min_anomaly: 0.1 }, (t) => t.direction === 'pk_to_outside' && t.status === 'completed' && t.anomaly_score >= 0.1],
  ];
  it.each(filters)('filters by %s', async (_name, variables, keep) => {
    const expected = synthetic.filter(keep).map((t) => t.trace_id);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(synthetic.length);
    expect((await all({ hours: 96, ...variables })).map((t) => t.trace_id)).toEqual(expected);
  });

  it('filters by target_ip exactly', async () => {
    const ip = synthetic[0].target_ip;
    expect((await all({ hours: 96, target_ip: ip })).map((t) => t.trace_id)).toEqual(synthetic.filter((t) => t.target_ip === ip).map((t) => t.trace_id));
  });

  it('limits the window by hours, since and until', async () => {
    const cut = new Date(NOW.getTime() - 24 * 3_600_000);
    expect((await all({ hours: 24 })).length).toBe(synthetic.filter((t) => t.measured_at >= cut).length);
    const window = await all({ since: cut.toISOString(), until: new Date(NOW.getTime() - 12 * 3_600_000).toISOString() });
    expect(window.map((t) => t.trace_id)).toEqual(
      synthetic.filter((t) => t.measured_at >= cut && t.measured_at < new Date(NOW.getTime() - 12 * 3_600_000)).map((t) => t.trace_id),
    );
  });

  it('includes hops only with include_hops', async () => {
    const result = await search({ limit: 3, include_hops: true });
    expect(result.data!.traces.data.every((t) => Array.isArray(t.hops) && t.hops.length > 1)).toBe(true);
  });

  it.each([
    ['limit', { limit: 0 }], ['limit', { limit: 201 }], ['hours', { hours: 0 }], ['hours', { hours: 721 }],
    ['min_anomaly', { min_anomaly: 1.5 }], ['min_anomaly', { min_anomaly: -0.1 }], ['probe_country', { probe_country: 'PAK' }],
    ['target_ip', { target_ip: '300.1.1.1' }], ['page', { page: 0 }], ['page', { page: 201, limit: 50 }],
    ['cursor', { cursor: 'garbage' }], ['since', { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }],
    ['probe_asn', { probe_asn: -1 }],
  ])('refuses a bad %s as BAD_USER_INPUT naming it', async (param, variables) => {
    const result = await search(variables);
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param });
  });

  it('seeks past the cursor with a row comparison on the (measured_at, id) order', async () => {
    const first = await search({ hours: 96, limit: 10 });
    statements.length = 0;
    await search({ hours: 96, limit: 10, cursor: first.data!.traces.nextCursor });
    const selects = statements.filter((sql) => sql.includes('from "traceroute"."trace" t'));
    expect(selects).toHaveLength(1);
    expect(selects[0]).toContain('(t.measured_at, t.id) <');
  });
});

describe('trace', () => {
  const QUERY = `query($id: ID!) { trace(id: $id) {
    trace_id direction status probe_ip probe_city probe_country probe_asn probe_as_name target_ip target_country target_asn
    hop_count responding_hops loss rtt_ms as_path anomaly_score
    anomaly { rtt_inflation as_path_change new_asn leaves_country loss incomplete baseline_rtt_ms baseline_samples }
    hops { hop ip rtts rtt_avg sent received loss private country city latitude longitude asn as_name }
  } }`;

  it('returns the full hops with per-hop RTTs, loss, geo and ASN data, and the score components', async () => {
    const id = synthetic.find((t) => t.status === 'completed' && t.probe_country === 'PK')!.trace_id;
    const result = await run<{ trace: Record<string, any> }>(subgraph, reader, QUERY, { id });
    expect(result.errors).toBeUndefined();
    const t = result.data!.trace;
    expect(t.trace_id).toBe(id);
    expect(t.hops[0]).toMatchObject({ hop: 1, ip: '192.168.1.1', private: true, country: null, asn: null, sent: 3, received: 3 });
    const last = t.hops[t.hops.length - 1];
    expect(last).toMatchObject({ ip: t.target_ip, private: false, asn: t.target_asn, country: t.target_country });
    expect(last.rtts).toHaveLength(3);
    expect(t.rtt_ms).toBe(last.rtt_avg);
    expect(t.as_path[0]).toBe(t.probe_asn);
    expect(t.as_path[t.as_path.length - 1]).toBe(t.target_asn);
    const weights = { rtt_inflation: 0.3, as_path_change: 0.2, new_asn: 0.1, leaves_country: 0.15, loss: 0.1, incomplete: 0.15 };
    const score = Object.entries(weights).reduce((sum, [name, weight]) => sum + weight * t.anomaly[name], 0);
    expect(t.anomaly_score).toBeCloseTo(score, 2);
  });

  it('answers null for an unknown or malformed id', async () => {
    for (const id of [randomUUID(), '0190f000-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const result = await run(subgraph, reader, QUERY, { id });
      expect(result.errors).toBeUndefined();
      expect(result.data!.trace).toBeNull();
    }
  });

  it('resolves references from other subgraphs by trace_id in one statement', async () => {
    statements.length = 0;
    const result = await run(subgraph, reader, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Trace { trace_id } } }`, {
      r: [{ __typename: 'Trace', trace_id: synthetic[1].trace_id }, { __typename: 'Trace', trace_id: 'nope' }, { __typename: 'Trace', trace_id: synthetic[2].trace_id }],
    });
    expect(result.data!._entities).toEqual([{ trace_id: synthetic[1].trace_id }, null, { trace_id: synthetic[2].trace_id }]);
    expect(statements.filter((sql) => sql.includes('"traceroute"."trace" t'))).toHaveLength(1);
  });
});

describe('traceStats', () => {
  it('counts by direction and status, anomaly tenths, top ASNs and cities and hours over the window', async () => {
    const result = await run<{ traceStats: any }>(
      subgraph,
      reader,
      `query { traceStats(hours: 96) { total by_direction { key count } by_status { key count } anomaly_distribution { key count }
        top_asns { asn as_name count } top_probe_cities { city country count } top_target_cities { city count } per_hour { hour count } } }`,
    );
    expect(result.errors).toBeUndefined();
    const s = result.data!.traceStats;
    const inWindow = await all({ hours: 96 });
    expect(s.total).toBe(inWindow.length);
    const count = (key: (t: TraceSummary) => string) => {
      const counts: Record<string, number> = {};
      for (const t of inWindow) counts[key(t)] = (counts[key(t)] ?? 0) + 1;
      return counts;
    };
    expect(Object.fromEntries(s.by_direction.map((r: any) => [r.key, r.count]))).toEqual(count((t) => t.direction));
    expect(Object.fromEntries(s.by_status.map((r: any) => [r.key, r.count]))).toEqual(count((t) => t.status));
    expect(s.anomaly_distribution).toHaveLength(10);
    expect(s.anomaly_distribution.reduce((n: number, r: any) => n + r.count, 0)).toBe(s.total);
    expect(s.top_asns[0].count).toBe(Math.max(...Object.values(count((t) => String(t.probe_asn)))));
    expect(s.per_hour.reduce((n: number, r: any) => n + r.count, 0)).toBe(s.total);
  });
});

describe('importTraces', () => {
  const IMPORT = `mutation($content: String!) { importTraces(content: $content) { read stored duplicates skipped { position reason } } }`;

  it('imports for an admin key and refuses every other kind', async () => {
    const content = readFileSync(sample('scamper2-valid-simple-json.jsonl'), 'utf8').replaceAll('"autonode"', '"autonode-2"');
    const refused = await run(subgraph, reader, IMPORT, { content });
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'admin_only' });
    const done = await run(subgraph, principalFor('ops', 'admin'), IMPORT, { content: content + '\nnot json' });
    expect(done.errors).toBeUndefined();
    expect(done.data!.importTraces).toEqual({ read: 1, stored: 1, duplicates: 0, skipped: [{ position: 'line 3', reason: expect.stringMatching(/^not JSON/) }] });
  });

  it('refuses content over 1 MiB', async () => {
    const result = await run(subgraph, principalFor('ops', 'admin'), IMPORT, { content: 'x'.repeat(1024 * 1024 + 1) });
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'content' });
  });
});

describe('schema', () => {
  it('has migrations that match the entities exactly, monthly partitions included', async () => {
    const partitions = await subgraph.orm.em.getConnection().execute(`select count(*)::int as n from pg_inherits where inhparent = 'traceroute.trace'::regclass`);
    expect(partitions[0].n).toBeGreaterThan(3);
    expect(await subgraph.orm.schema.getUpdateSchemaSQL({ wrap: false, schema: 'traceroute' })).toBe('');
  });
});
