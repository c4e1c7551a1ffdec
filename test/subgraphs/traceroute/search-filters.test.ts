import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../../identity/index.js';
import { LocalKeyStore } from '../../../identity/local-key-store.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { sharedIpEnricher, type IpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';
import { createTracerouteSubgraph } from '../../../subgraphs/traceroute/index.js';
import { readFileRecords } from '../../../subgraphs/traceroute/ingest/record-reader.js';
import { SyntheticTraceGenerator } from '../../../subgraphs/traceroute/ingest/synthetic-generator.js';
import { TraceImporter } from '../../../subgraphs/traceroute/ingest/trace-importer.js';
import { traceFilter } from '../../../subgraphs/traceroute/trace/trace-filter.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

/**
 * The searches RIPE Atlas users make (measurement, probe, address family, protocol, target AS,
 * "passes through" an address or an AS), checked against the source records read here on their
 * own: the real fixtures and the synthetic traces regenerated from the same seed.
 */
const DATA = path.resolve(import.meta.dirname, '../../fixtures/traceroute');
const FILES = ['ripe-atlas-traceroutes.jsonl', 'ripe-atlas-quirks.jsonl', 'ripe-atlas-quirks-constructed.jsonl', 'scamper-lab.jsonl', 'scamper2-valid-complex.jsonl'];
const NOW = new Date();
const SEED = 19;
const SYNTHETIC = 300;
/** An explicit window wider than the 720 hours `hours` may span: an explicit range has no cap. */
const WINDOW = { since: '2000-01-01T00:00:00Z', until: '2100-01-01T00:00:00Z' };

type Json = Record<string, any>;
/** What the filters look at, read from a source record without the importer. */
interface Expected {
  key: string;
  msmId: number | null;
  probeId: number | null;
  af: number;
  protocol: string | null;
  targetIp: string | null;
  hopIps: string[];
}

const keyOf = (measuredAt: Date | string, targetIp: string | null, probeId: number | null) => `${new Date(measuredAt).toISOString()}|${targetIp}|${probeId}`;

function fromAtlas(record: Json): Expected {
  const hopIps = (record.result ?? []).flatMap((hop: Json) =>
    (hop.result ?? []).filter((r: Json) => typeof r.from === 'string' && r.late === undefined && !r.dup && !r.edst).map((r: Json) => r.from as string),
  );
  return {
    key: keyOf(new Date(record.timestamp * 1000), record.dst_addr ?? null, record.prb_id),
    msmId: record.msm_id, probeId: record.prb_id, af: record.af, protocol: record.proto, targetIp: record.dst_addr ?? null, hopIps,
  };
}

function fromScamper(record: Json): Expected {
  const method = String(record.method);
  return {
    key: keyOf(new Date(record.start.sec * 1000 + Math.floor(record.start.usec / 1000)), record.dst, null),
    msmId: null, probeId: null, af: record.dst.includes(':') ? 6 : 4,
    protocol: method.startsWith('icmp') ? 'ICMP' : method.startsWith('udp') ? 'UDP' : 'TCP',
    targetIp: record.dst,
    hopIps: (record.hops ?? []).filter((h: Json) => h.addr && h.addr !== '*').map((h: Json) => h.addr as string),
  };
}

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;
let enricher: IpEnricher;
const reader = principalFor('reader', 'traceroute');
const expected: Expected[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  subgraph = await createTracerouteSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, keyStore: new LocalKeyStore(identityOrm) });
  enricher = await sharedIpEnricher();
  for (const file of FILES) {
    const report = await new TraceImporter(subgraph.orm.em.fork(), enricher).run(readFileRecords(`${DATA}/${file}`));
    expect(report.skipped).toEqual([]);
    for (const line of readFileSync(`${DATA}/${file}`, 'utf8').split('\n').filter((l) => l.trim())) {
      const record = JSON.parse(line);
      if ('msm_id' in record) expected.push(fromAtlas(record));
      else if (record.type === 'trace') expected.push(fromScamper(record));
      else if (record.Trace) expected.push(fromScamper(record.Trace));
    }
  }
  const stored = await new TraceImporter(subgraph.orm.em.fork(), enricher).store(new SyntheticTraceGenerator(enricher, SEED).generate(SYNTHETIC, { days: 3, now: NOW }));
  expect(stored.stored).toBe(SYNTHETIC);
  for (const { trace } of new SyntheticTraceGenerator(enricher, SEED).generate(SYNTHETIC, { days: 3, now: NOW })) {
    expected.push({
      key: keyOf(trace.measuredAt, trace.targetIp, trace.probeId),
      msmId: trace.msmId, probeId: trace.probeId, af: trace.af, protocol: trace.protocol, targetIp: trace.targetIp,
      hopIps: trace.hops.flatMap((h) => h.replies.filter((r) => r.kind === 'reply' && r.ip).map((r) => r.ip!)),
    });
  }
}, 120_000);

afterAll(async () => {
  await subgraph?.close();
  await identityOrm?.close(true);
  await db?.drop();
});

const ARGS: Record<string, string> = {
  direction: 'TraceDirection', status: 'TraceStatus', probeCountry: 'String', probeCity: 'String', probeAsn: 'Int', targetDomain: 'String',
  targetIp: 'String', targetCity: 'String', minAnomaly: 'Float', since: 'DateTime', until: 'DateTime', hours: 'Int', msmId: 'Int', probeId: 'Int',
  af: 'Int', protocol: 'TraceProtocol', targetAsn: 'Int', hopIp: 'String', hopAsn: 'Int',
};
const declare = (names: string[]) => names.map((n) => `$${n}: ${ARGS[n]}`).join(', ');
const pass = (names: string[]) => names.map((n) => `${n}: $${n}`).join(', ');

interface Found { traceId: string; measuredAt: string; targetIp: string | null; probeId: number | null; probeCity: string | null; targetCity: string | null; status: string; direction: string }

/** Every trace a search finds, following nextCursor. */
async function search(filters: Record<string, unknown>): Promise<Found[]> {
  const names = Object.keys(filters);
  const query = `query(${declare(names)}${names.length ? ', ' : ''}$cursor: String) {
    traces(${pass(names)}${names.length ? ', ' : ''}limit: 200, cursor: $cursor) { data { traceId measuredAt targetIp probeId probeCity targetCity status direction } nextCursor } }`;
  const found: Found[] = [];
  let cursor: string | null = null;
  do {
    const result: ExecutionResult<{ traces: { data: Found[]; nextCursor: string | null } }> = await run(subgraph, reader, query, { ...filters, cursor });
    expect(result.errors).toBeUndefined();
    found.push(...result.data!.traces.data);
    cursor = result.data!.traces.nextCursor;
  } while (cursor);
  return found;
}

const keys = (found: Found[]) => found.map((t) => keyOf(t.measuredAt, t.targetIp, t.probeId)).sort();
const want = (keep: (e: Expected) => boolean) => expected.filter(keep).map((e) => e.key).sort();

describe('the filters Atlas users search by', () => {
  const asnOf = (ip: string) => enricher.lookup(ip).asn;
  const cases: [string, Record<string, unknown>, (e: Expected) => boolean][] = [
    ['msmId', { msmId: 29792007 }, (e) => e.msmId === 29792007],
    ['msmId of a constructed record', { msmId: 5151 }, (e) => e.msmId === 5151],
    ['probeId', { probeId: 1004666 }, (e) => e.probeId === 1004666],
    ['af 6', { af: 6 }, (e) => e.af === 6],
    ['af 4', { af: 4 }, (e) => e.af === 4],
    ['protocol UDP', { protocol: 'UDP' }, (e) => e.protocol === 'UDP'],
    ['protocol ICMP', { protocol: 'ICMP' }, (e) => e.protocol === 'ICMP'],
    ['targetAsn', { targetAsn: 15169 }, (e) => e.targetIp !== null && asnOf(e.targetIp) === 15169],
    ['hopIp of a load-balanced responder', { hopIp: '194.187.172.101' }, (e) => e.hopIps.includes('194.187.172.101')],
    ['hopIp of a scamper router', { hopIp: '10.33.2.2' }, (e) => e.hopIps.includes('10.33.2.2')],
    ['hopAsn (an exchange LAN answers in it)', { hopAsn: 1200 }, (e) => e.hopIps.some((ip) => asnOf(ip) === 1200)],
    ['hopAsn of a transit network', { hopAsn: 3356 }, (e) => e.hopIps.some((ip) => asnOf(ip) === 3356)],
    ['several at once', { af: 4, protocol: 'ICMP', hopAsn: 17557 }, (e) => e.af === 4 && e.protocol === 'ICMP' && e.hopIps.some((ip) => asnOf(ip) === 17557)],
  ];
  it.each(cases)('%s finds exactly the traces whose records say so', async (_name, filters, keep) => {
    const wanted = want(keep);
    expect(wanted.length).toBeGreaterThan(0);
    expect(wanted.length).toBeLessThan(expected.length);
    expect(keys(await search({ ...WINDOW, ...filters }))).toEqual(wanted);
  });

  it('passes-through leaves out late, duplicate and other-destination answers', async () => {
    // 10.0.0.1 answered at hop 3 of probe 60101 only late, and never in time anywhere.
    expect(expected.some((e) => e.hopIps.includes('10.0.0.1'))).toBe(false);
    expect(await search({ ...WINDOW, hopIp: '10.0.0.1' })).toEqual([]);
    expect(await search({ ...WINDOW, hopIp: '108.170.241.1' })).toEqual([]);
  });

  it('matches an IPv6 address however it is spelled', async () => {
    const target = want((e) => e.targetIp === '2001:4860:4860::8844');
    expect(target).toHaveLength(1);
    for (const spelling of ['2001:4860:4860::8844', '2001:4860:4860:0:0:0:0:8844', '2001:4860:4860:0000::8844', '2001:4860:4860::8844'.toUpperCase()]) {
      expect(keys(await search({ ...WINDOW, targetIp: spelling })), spelling).toEqual(target);
    }
    const hop = expected.flatMap((e) => e.hopIps).find((ip) => ip.includes('::') && !ip.startsWith('fe80'))!;
    const through = want((e) => e.hopIps.includes(hop));
    const expanded = hop.replace('::', `:${Array(9 - hop.split(':').length).fill('0').join(':')}:`).toUpperCase();
    expect(expanded).not.toBe(hop);
    expect(keys(await search({ ...WINDOW, hopIp: expanded }))).toEqual(through);
  });

  it('matches cities whatever their case, as countries', async () => {
    const everything = await search(WINDOW);
    for (const field of ['probeCity', 'targetCity'] as const) {
      const city = everything.find((t) => t[field] && /[a-z]/.test(t[field]!))![field]!;
      const wanted = keys(everything.filter((t) => t[field] === city));
      expect(keys(await search({ ...WINDOW, [field]: city })), city).toEqual(wanted);
      expect(keys(await search({ ...WINDOW, [field]: city.toUpperCase() })), city).toEqual(wanted);
      expect(keys(await search({ ...WINDOW, [field]: city.toLowerCase() })), city).toEqual(wanted);
    }
  });

  it.each([
    ['af', { af: 5 }], ['af', { af: 0 }], ['msmId', { msmId: -1 }], ['probeId', { probeId: -3 }], ['targetAsn', { targetAsn: -1 }],
    ['hopAsn', { hopAsn: -2 }], ['hopIp', { hopIp: 'router.example' }], ['hopIp', { hopIp: '300.1.1.1' }], ['targetIp', { targetIp: '2001:::1' }],
  ])('refuses a bad %s as BAD_USER_INPUT naming it', async (param, filters) => {
    const names = Object.keys(filters);
    const result = await run(subgraph, reader, `query(${declare(names)}) { traces(${pass(names)}) { data { traceId } } }`, filters);
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param });
  });

  it('refuses a protocol the graph does not know', async () => {
    const result = await run(subgraph, reader, `query { traces(protocol: SCTP) { data { traceId } } }`);
    expect(result.errors?.[0].message).toMatch(/TraceProtocol/);
  });
});

describe('traceStats', () => {
  const STATS = (names: string[]) => `query(${declare(names)}) { traceStats(${pass(names)}) { total byStatus { key count } byDirection { key count } topProbeCities { city count } } }`;
  const tally = (found: Found[], key: (t: Found) => string) => {
    const counts: Record<string, number> = {};
    for (const t of found) counts[key(t)] = (counts[key(t)] ?? 0) + 1;
    return counts;
  };
  it.each([
    ['msmId', { msmId: 29792007 }],
    ['probeId', { probeId: 1004666 }],
    ['af', { af: 6 }],
    ['protocol', { protocol: 'UDP' }],
    ['targetAsn', { targetAsn: 15169 }],
    ['hopIp', { hopIp: '10.33.2.2' }],
    ['hopAsn', { hopAsn: 3356 }],
    ['probeCity in any case', { probeCity: 'kArAcHi' }],
    ['status and targetDomain', { status: 'completed', targetDomain: 'google' }],
    ['probeCountry and minAnomaly', { probeCountry: 'pk', minAnomaly: 0.2 }],
  ])('counts what the search with %s finds', async (_name, filters) => {
    const all = { ...WINDOW, ...filters };
    const found = await search(all);
    expect(found.length).toBeGreaterThan(0);
    const names = Object.keys(all);
    const result = await run<{ traceStats: Json }>(subgraph, reader, STATS(names), all);
    expect(result.errors).toBeUndefined();
    const stats = result.data!.traceStats;
    expect(stats.total).toBe(found.length);
    expect(Object.fromEntries(stats.byStatus.map((r: Json) => [r.key, r.count]))).toEqual(tally(found, (t) => t.status));
    expect(Object.fromEntries(stats.byDirection.map((r: Json) => [r.key, r.count]))).toEqual(tally(found, (t) => t.direction));
  });
});

describe('indexes', () => {
  // With sequential scans priced out, a filter its index serves is an index condition on every
  // partition; one no index serves would still be a Seq Scan or a mere Filter. The window is left
  // out: on tables this small the planner may as well walk the time-order index.
  const WINDOW_SQL = 't.measured_at >= ? and t.measured_at < ? and ';
  it.each([
    ['msmId', { msmId: 5151 }, 'msm_id'],
    ['probeId', { probeId: 60101 }, 'probe_id'],
    ['af', { af: 6 }, 'af'],
    ['protocol', { protocol: 'TCP' }, 'protocol'],
    ['targetAsn', { targetAsn: 15169 }, 'target_asn'],
    ['hopIp', { hopIp: '10.33.2.2' }, 'hop_ips'],
    ['hopAsn', { hopAsn: 1200 }, 'hop_asns'],
    ['probeCity', { probeCity: 'Karachi' }, 'lower((probe_city)'],
    ['targetCity', { targetCity: 'Lahore' }, 'lower((target_city)'],
  ])('serves %s from an index', async (_name, filters, column) => {
    const filter = traceFilter({ ...filters, since: new Date(WINDOW.since), until: new Date(WINDOW.until) } as never, 168);
    const connection = subgraph.orm.em.fork().getConnection();
    const plan = await connection.transactional(async (trx) => {
      await connection.execute('set local enable_seqscan = off', [], 'run', trx);
      const rows = await connection.execute<{ 'QUERY PLAN': string }[]>(
        `explain select t.id from "traceroute"."trace" t where ${filter.where.replace(WINDOW_SQL, '')}`,
        filter.params.slice(2),
        'all',
        trx,
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).not.toContain('Seq Scan');
    expect(plan).toMatch(new RegExp(`Index Cond: .*${column.replace(/[()]/g, '\\$&')}`));
  });
});
