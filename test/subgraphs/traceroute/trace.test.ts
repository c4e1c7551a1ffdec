import { readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../../identity/index.js';
import { LocalKeyStore } from '../../../identity/local-key-store.js';
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

const TRACE_FIELDS = `traceId measuredAt direction status probeCity probeCountry probeAsn targetDomain targetIp
  targetCity anomalyScore`;
const TRACES = `query($direction: TraceDirection, $probeCity: String, $probeCountry: String, $probeAsn: Int,
  $targetDomain: String, $targetIp: String, $targetCity: String, $minAnomaly: Float, $status: TraceStatus,
  $since: DateTime, $until: DateTime, $hours: Int, $page: Int, $limit: Int, $includeHops: Boolean, $cursor: String) {
  traces(direction: $direction, probeCity: $probeCity, probeCountry: $probeCountry, probeAsn: $probeAsn,
    targetDomain: $targetDomain, targetIp: $targetIp, targetCity: $targetCity, minAnomaly: $minAnomaly,
    status: $status, since: $since, until: $until, hours: $hours, page: $page, limit: $limit,
    includeHops: $includeHops, cursor: $cursor) {
    data { ${TRACE_FIELDS} hops { hop } }
    page limit hasMore nextCursor
  }
}`;

interface TraceSummary {
  traceId: string;
  measuredAt: Date;
  direction: string;
  status: string;
  probeCity: string | null;
  probeCountry: string | null;
  probeAsn: number | null;
  targetDomain: string | null;
  targetIp: string;
  targetCity: string | null;
  anomalyScore: number;
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
  b.measuredAt.getTime() - a.measuredAt.getTime() || (a.traceId < b.traceId ? 1 : a.traceId > b.traceId ? -1 : 0);

let synthetic: TraceSummary[];

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  subgraph = await createTracerouteSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, keyStore: new LocalKeyStore(identityOrm), onQuery: (sql) => statements.push(sql) });
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
    expect(report.read).toBe(9);
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
    const [found] = await all({ targetDomain: 'dns.google', since: '2023-11-01T00:00:00Z', until: '2023-12-01T00:00:00Z' });
    const trace = await run<{ trace: Record<string, unknown> & { hops: Record<string, unknown>[] } }>(
      subgraph,
      reader,
      `query($id: ID!) { trace(id: $id) { af protocol status probeCountry hops { hop ip rtts late errors private mpls country asn } } }`,
      { id: found.traceId },
    );
    expect(trace.errors).toBeUndefined();
    const t = trace.data!.trace;
    expect(t).toMatchObject({ af: 6, protocol: 'UDP', probeCountry: 'PK' });
    // The target answered with an unreachable error only: the trace did not complete.
    expect(t.status).toBe('failed');
    expect(t.hops.map((h) => h.hop)).toEqual([1, 2, 3, 4, 255]);
    // The late answer is set apart: two probes (an answer and a timeout), the late one beside them.
    expect(t.hops[0]).toMatchObject({ ip: 'fe80::1', rtts: [0.5, null], late: 1, private: true, country: null });
    expect(t.hops[1]).toMatchObject({ ip: null, rtts: [], errors: ['sendto failed: Network is unreachable'] });
    expect(t.hops[2]).toMatchObject({ ip: '2001:4860::1', mpls: [24001], asn: 15169, private: false });
    expect(t.hops[3]).toMatchObject({ errors: ['A'] });
    expect(t.hops[4]).toMatchObject({ ip: null, rtts: [null, null, null] });
  });
});

describe('measurements that failed before any hop', () => {
  // RIPE Atlas's shape when the probe's resolver fails: no dst_addr, the error where the hops would be.
  const unresolved = {
    fw: 5080, lts: 12, af: 4, type: 'traceroute', msm_id: 5001, prb_id: 6012, timestamp: 1_686_000_000, proto: 'ICMP',
    msm_name: 'Traceroute', dst_name: 'Unresolvable.Example.PK', from: '39.32.10.5', src_addr: '192.168.1.10', paris_id: 1, size: 48,
    result: [{ error: 'name resolution failed: non-recoverable failure in name resolution' }],
  };
  const since = '2023-06-01T00:00:00Z';
  const until = '2023-06-30T00:00:00Z';
  const FAILED = `query($since: DateTime, $until: DateTime, $status: TraceStatus, $targetIp: String, $targetDomain: String) {
    traces(since: $since, until: $until, status: $status, targetIp: $targetIp, targetDomain: $targetDomain) {
      data { traceId measuredAt status probeId probeIp probeCountry targetIp targetDomain error hopCount } } }`;
  type Failed = { traceId: string; measuredAt: Date; status: string; probeId: number; probeIp: string; probeCountry: string | null; targetIp: string | null; targetDomain: string; error: string; hopCount: number };

  it('are stored as failed traces with their error, target domain, probe and time, once', async () => {
    const content = [
      JSON.stringify(unresolved),
      // The same failure written with a top-level error and no result at all.
      JSON.stringify({ ...unresolved, prb_id: 6013, result: undefined, error: 'name resolution failed' }),
      // Neither an address nor an error: malformed, still refused.
      JSON.stringify({ ...unresolved, prb_id: 6014, result: [] }),
    ].join('\n');
    const report = await (await importer()).run(readTextRecords(content));
    // The refused record counts as read.
    expect(report).toEqual({ read: 3, stored: 2, duplicates: 0, skipped: [{ position: 'line 3', reason: 'dst_addr is missing or not an IP address' }] });
    expect(await (await importer()).run(readTextRecords(content))).toMatchObject({ read: 3, stored: 0, duplicates: 2 });

    const result = await run<{ traces: { data: Failed[] } }>(subgraph, reader, FAILED, { since, until });
    expect(result.errors).toBeUndefined();
    const byProbe = Object.fromEntries(result.data!.traces.data.map((t) => [t.probeId, t]));
    expect(byProbe[6012]).toMatchObject({
      status: 'failed', targetIp: null, targetDomain: 'unresolvable.example.pk', probeIp: '39.32.10.5', hopCount: 0,
      error: 'name resolution failed: non-recoverable failure in name resolution',
    });
    expect(byProbe[6012].measuredAt.toISOString()).toBe(new Date(unresolved.timestamp * 1000).toISOString());
    expect(byProbe[6013]).toMatchObject({ status: 'failed', targetIp: null, error: 'name resolution failed' });

    const one = await run<{ trace: { traceId: string; hops: unknown[]; targetIp: null } }>(subgraph, reader, `query($id: ID!) { trace(id: $id) { traceId targetIp hops { hop } } }`, { id: byProbe[6012].traceId });
    expect(one.data!.trace).toEqual({ traceId: byProbe[6012].traceId, targetIp: null, hops: [] });
  });

  it('count in the stats and the failure rate, and answer the filters sensibly', async () => {
    const stats = await run<{ traceStats: { total: number; byStatus: { key: string; count: number }[] } }>(
      subgraph,
      reader,
      `query($since: DateTime, $until: DateTime) { traceStats(since: $since, until: $until) { total byStatus { key count } } }`,
      { since, until },
    );
    expect(stats.errors).toBeUndefined();
    expect(stats.data!.traceStats).toEqual({ total: 2, byStatus: [{ key: 'failed', count: 2 }] });
    const count = async (variables: Record<string, unknown>) =>
      (await run<{ traces: { data: Failed[] } }>(subgraph, reader, FAILED, { since, until, ...variables })).data!.traces.data.length;
    expect(await count({ status: 'failed' })).toBe(2);
    expect(await count({ status: 'completed' })).toBe(0);
    expect(await count({ targetDomain: 'example.pk' })).toBe(2);
    // No address was ever traced, so no address matches.
    expect(await count({ targetIp: '192.0.2.1' })).toBe(0);
  });
});

describe('traces', () => {
  it('returns the 50 newest traces of the last 168 hours by default, with the envelope', async () => {
    const result = await search({});
    expect(result.errors).toBeUndefined();
    const page = result.data!.traces;
    expect(page).toMatchObject({ page: 1, limit: 50, hasMore: true, nextCursor: expect.any(String) });
    expect(page.data.map((t) => t.traceId)).toEqual([...synthetic].sort(order).slice(0, 50).map((t) => t.traceId));
    expect(page.data.every((t) => t.hops === null)).toBe(true);
  });

  it('serves the same order by page number and by cursor, without repeats', async () => {
    const byPage: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const result = await search({ hours: 96, limit: 30, page });
      byPage.push(...result.data!.traces.data.map((t) => t.traceId));
    }
    expect(byPage).toEqual(synthetic.slice(0, 120).map((t) => t.traceId));
    expect(new Set(synthetic.map((t) => t.traceId)).size).toBe(400);
    expect(synthetic.slice().sort(order)).toEqual(synthetic);
  });

  it('breaks ties of equal measurement times by traceId across pages', async () => {
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
      paged.push(...result.data!.traces.data.map((t) => t.traceId));
      cursor = result.data!.traces.nextCursor;
    } while (cursor);
    expect(paged).toEqual(tied.map((t) => t.traceId).sort().reverse());
    expect(base).toBeDefined();
  });

  const filters: [string, Record<string, unknown>, (t: TraceSummary) => boolean][] = [
    ['direction', { direction: 'outside_to_pk' }, (t) => t.direction === 'outside_to_pk'],
    ['status', { status: 'failed' }, (t) => t.status === 'failed'],
    ['probeCountry', { probeCountry: 'pk' }, (t) => t.probeCountry === 'PK'],
    ['probeCity', { probeCity: 'Karachi' }, (t) => t.probeCity === 'Karachi'],
    ['probeAsn', { probeAsn: 17557 }, (t) => t.probeAsn === 17557],
    ['targetDomain (partial, any case)', { targetDomain: 'DAWN' }, (t) => (t.targetDomain ?? '').includes('dawn')],
    ['targetCity', { targetCity: 'Lahore' }, (t) => t.targetCity === 'Lahore'],
    ['minAnomaly', { minAnomaly: 0.3 }, (t) => t.anomalyScore >= 0.3],
    ['several at once', { direction: 'pk_to_outside', status: 'completed', minAnomaly: 0.1 }, (t) => t.direction === 'pk_to_outside' && t.status === 'completed' && t.anomalyScore >= 0.1],
  ];
  it.each(filters)('filters by %s', async (_name, variables, keep) => {
    const expected = synthetic.filter(keep).map((t) => t.traceId);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(synthetic.length);
    expect((await all({ hours: 96, ...variables })).map((t) => t.traceId)).toEqual(expected);
  });

  it('filters by targetIp exactly', async () => {
    const ip = synthetic[0].targetIp;
    expect((await all({ hours: 96, targetIp: ip })).map((t) => t.traceId)).toEqual(synthetic.filter((t) => t.targetIp === ip).map((t) => t.traceId));
  });

  it('limits the window by hours, since and until', async () => {
    const cut = new Date(NOW.getTime() - 24 * 3_600_000);
    expect((await all({ hours: 24 })).length).toBe(synthetic.filter((t) => t.measuredAt >= cut).length);
    const window = await all({ since: cut.toISOString(), until: new Date(NOW.getTime() - 12 * 3_600_000).toISOString() });
    expect(window.map((t) => t.traceId)).toEqual(
      synthetic.filter((t) => t.measuredAt >= cut && t.measuredAt < new Date(NOW.getTime() - 12 * 3_600_000)).map((t) => t.traceId),
    );
  });

  it('includes hops only with includeHops', async () => {
    const result = await search({ limit: 3, includeHops: true });
    expect(result.data!.traces.data.every((t) => Array.isArray(t.hops) && t.hops.length > 1)).toBe(true);
  });

  it.each([
    ['limit', { limit: 0 }], ['limit', { limit: 201 }], ['hours', { hours: 0 }], ['hours', { hours: 721 }],
    ['minAnomaly', { minAnomaly: 1.5 }], ['minAnomaly', { minAnomaly: -0.1 }], ['probeCountry', { probeCountry: 'PAK' }],
    ['targetIp', { targetIp: '300.1.1.1' }], ['page', { page: 0 }], ['page', { page: 201, limit: 50 }],
    ['cursor', { cursor: 'garbage' }], ['since', { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }],
    ['probeAsn', { probeAsn: -1 }],
  ])('refuses a bad %s as BAD_USER_INPUT naming it', async (param, variables) => {
    const result = await search(variables);
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param });
  });

  // Year 0 is a JavaScript date but not a PostgreSQL one: once a 500. The DateTime scalar refuses
  // it while coercing the variable (Apollo, in front of this, adds BAD_USER_INPUT and the REST
  // bridge names the parameter: test/edge/rest/traceroute.test.ts).
  it.each([
    ['since', { since: '0000-01-01T00:00:00Z' }],
    ['until', { until: '0000-06-01T00:00:00Z' }],
  ])('refuses a %s in year 0 while coercing the variable', async (param, variables) => {
    const result = await search(variables);
    expect(result.data).toBeUndefined();
    expect(result.errors?.[0].message).toMatch(new RegExp(`^Variable "\\$${param}" got invalid value .*must lie between 0001-01-01 and 9999-12-31`));
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
    traceId direction status probeIp probeCity probeCountry probeAsn probeAsName targetIp targetCountry targetAsn
    hopCount respondingHops loss rttMs asPath anomalyScore
    anomaly { rttInflation asPathChange newAsn leavesCountry loss incomplete baselineRttMs baselineSamples }
    hops { hop ip rtts rttAvg sent received loss private country city latitude longitude asn asName }
  } }`;

  it('returns the full hops with per-hop RTTs, loss, geo and ASN data, and the score components', async () => {
    const id = synthetic.find((t) => t.status === 'completed' && t.probeCountry === 'PK')!.traceId;
    const result = await run<{ trace: Record<string, any> }>(subgraph, reader, QUERY, { id });
    expect(result.errors).toBeUndefined();
    const t = result.data!.trace;
    expect(t.traceId).toBe(id);
    expect(t.hops[0]).toMatchObject({ hop: 1, ip: '192.168.1.1', private: true, country: null, asn: null, sent: 3, received: 3 });
    const last = t.hops[t.hops.length - 1];
    expect(last).toMatchObject({ ip: t.targetIp, private: false, asn: t.targetAsn, country: t.targetCountry });
    expect(last.rtts).toHaveLength(3);
    expect(t.rttMs).toBe(last.rttAvg);
    expect(t.asPath[0]).toBe(t.probeAsn);
    expect(t.asPath[t.asPath.length - 1]).toBe(t.targetAsn);
    const weights = { rttInflation: 0.3, asPathChange: 0.2, newAsn: 0.1, leavesCountry: 0.15, loss: 0.1, incomplete: 0.15 };
    const score = Object.entries(weights).reduce((sum, [name, weight]) => sum + weight * t.anomaly[name], 0);
    expect(t.anomalyScore).toBeCloseTo(score, 2);
  });

  it('answers null for an unknown or malformed id', async () => {
    // The last two carry times past year 9999, which PostgreSQL cannot read: once a 500.
    for (const id of [randomUUID(), '0190f000-0000-7000-8000-000000000000', 'not-a-uuid', 'e677d220-0000-7000-8000-000000000000', 'ffffffff-ffff-7fff-bfff-ffffffffffff']) {
      const result = await run(subgraph, reader, QUERY, { id });
      expect(result.errors).toBeUndefined();
      expect(result.data!.trace).toBeNull();
    }
  });

  it('resolves references from other subgraphs by traceId in one statement', async () => {
    statements.length = 0;
    const result = await run(subgraph, reader, `query($r: [_Any!]!) { _entities(representations: $r) { ... on Trace { traceId } } }`, {
      r: [{ __typename: 'Trace', traceId: synthetic[1].traceId }, { __typename: 'Trace', traceId: 'nope' }, { __typename: 'Trace', traceId: synthetic[2].traceId }],
    });
    expect(result.data!._entities).toEqual([{ traceId: synthetic[1].traceId }, null, { traceId: synthetic[2].traceId }]);
    expect(statements.filter((sql) => sql.includes('"traceroute"."trace" t'))).toHaveLength(1);
  });
});

describe('traceStats', () => {
  it('counts by direction and status, anomaly tenths, top ASNs and cities and hours over the window', async () => {
    const result = await run<{ traceStats: any }>(
      subgraph,
      reader,
      `query { traceStats(hours: 96) { total byDirection { key count } byStatus { key count } anomalyDistribution { key count }
        topAsns { asn asName count } topProbeCities { city country count } topTargetCities { city count } perHour { hour count } } }`,
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
    expect(Object.fromEntries(s.byDirection.map((r: any) => [r.key, r.count]))).toEqual(count((t) => t.direction));
    expect(Object.fromEntries(s.byStatus.map((r: any) => [r.key, r.count]))).toEqual(count((t) => t.status));
    expect(s.anomalyDistribution).toHaveLength(10);
    expect(s.anomalyDistribution.reduce((n: number, r: any) => n + r.count, 0)).toBe(s.total);
    expect(s.topAsns[0].count).toBe(Math.max(...Object.values(count((t) => String(t.probeAsn)))));
    expect(s.perHour.reduce((n: number, r: any) => n + r.count, 0)).toBe(s.total);
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
    expect(done.data!.importTraces).toEqual({ read: 2, stored: 1, duplicates: 0, skipped: [{ position: 'line 3', reason: expect.stringMatching(/^not JSON/) }] });
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
