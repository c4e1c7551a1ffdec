import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../../identity/index.js';
import { LocalKeyStore } from '../../../identity/local-key-store.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { sharedIpEnricher, type IpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';
import { createTracerouteSubgraph } from '../../../subgraphs/traceroute/index.js';
import { readFileRecords } from '../../../subgraphs/traceroute/ingest/record-reader.js';
import { TraceImporter } from '../../../subgraphs/traceroute/ingest/trace-importer.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

/**
 * Every hop of every fixture trace, stored and read back over GraphQL, against an independent
 * reading of its source record: the reader below is deliberately plain and shares no code with
 * the importer; the hand-written cases after it pin the measurements the issue names.
 */
const DATA = path.resolve(import.meta.dirname, '../../fixtures/traceroute');
const FIXTURES = [
  'ripe-atlas-traceroutes.jsonl',
  'ripe-atlas-quirks.jsonl',
  'ripe-atlas-quirks-constructed.jsonl',
  'scamper2-valid-complex.jsonl',
  'scamper2-valid-simple-json.jsonl',
  'scamper-lab.jsonl',
];

type Json = Record<string, any>;
interface Responder { ip: string; received: number; rtts: number[]; errors: string[] }
interface Stray { kind: string; ip: string | null; lateBy: number | null; destination: string | null }
interface Hop {
  hop: number; ip: string | null; rtts: (number | null)[]; rttAvg: number | null; sent: number; received: number; loss: number;
  late: number; duplicates: number; otherDestination: number; errors: string[]; responders: Responder[]; strayReplies: Stray[];
  ixp: string | null; asn: number | null;
}
interface Trace { key: string; hopCount: number; respondingHops: number; loss: number; error: string | null; hops: Hop[] }

const round3 = (n: number) => Math.round(n * 1000) / 1000;
const avg = (xs: number[]) => (xs.length ? round3(xs.reduce((a, b) => a + b, 0) / xs.length) : null);

/** A hop from its probes' outcomes (address, rtt, error) and its stray answers, as the issue defines the figures. */
function hopFrom(hop: number, outcomes: { ip: string | null; rtt: number | null; err: string | null }[], stray: Stray[], sendErrors: string[], enricher: IpEnricher): Hop {
  const answers = outcomes.filter((o) => o.ip !== null);
  const responders: Responder[] = [];
  for (const a of answers) {
    let r = responders.find((x) => x.ip === a.ip);
    if (!r) responders.push((r = { ip: a.ip!, received: 0, rtts: [], errors: [] }));
    r.received++;
    if (a.rtt !== null) r.rtts.push(a.rtt);
    if (a.err !== null) r.errors.push(a.err);
  }
  responders.sort((a, b) => b.received - a.received);
  const main = responders[0] ?? null;
  return {
    hop,
    ip: main?.ip ?? null,
    rtts: outcomes.map((o) => (o.ip === null ? null : o.rtt)),
    rttAvg: main ? avg(main.rtts) : null,
    sent: outcomes.length,
    received: answers.length,
    loss: outcomes.length ? round3(1 - answers.length / outcomes.length) : 1,
    late: stray.filter((s) => s.kind === 'late').length,
    duplicates: stray.filter((s) => s.kind === 'duplicate').length,
    otherDestination: stray.filter((s) => s.kind === 'other_destination').length,
    errors: [...answers.flatMap((a) => (a.err === null ? [] : [a.err])), ...sendErrors],
    responders,
    strayReplies: stray,
    ixp: null,
    asn: main ? enricher.lookup(main.ip).asn : null,
  };
}

/** RIPE Atlas: one probe per entry that is an answer or a `*`; late, dup and edst answers are stray; `error` entries are send errors. */
function readAtlas(record: Json, enricher: IpEnricher): Trace {
  const hops = (record.result ?? []).map((h: Json) => {
    const outcomes: { ip: string | null; rtt: number | null; err: string | null }[] = [];
    const stray: Stray[] = [];
    const sendErrors: string[] = h.error ? [h.error] : [];
    for (const e of h.result ?? []) {
      if (e.x === '*') outcomes.push({ ip: null, rtt: null, err: null });
      else if (e.error && !e.from) sendErrors.push(e.error);
      else if (e.dup) stray.push({ kind: 'duplicate', ip: e.from, lateBy: null, destination: e.edst ?? null });
      else if (e.late !== undefined) stray.push({ kind: 'late', ip: e.from, lateBy: e.late, destination: e.edst ?? null });
      else if (e.edst) stray.push({ kind: 'other_destination', ip: e.from, lateBy: null, destination: e.edst });
      else outcomes.push({ ip: e.from, rtt: e.rtt ?? null, err: e.err === undefined ? null : String(e.err) });
    }
    return hopFrom(h.hop, outcomes, stray, sendErrors, enricher);
  });
  return summed(`atlas:${record.msm_id}:${record.prb_id}:${record.timestamp * 1000}`, hops);
}

/** scamper: every TTL from firsthop to hop_count; a TTL's answers by probe_id, the unanswered ids up to its probe count are timeouts. */
function readScamper(record: Json, host: string | null, enricher: IpEnricher): Trace {
  const replies: Json[] = record.hops ?? [];
  const first = record.firsthop ?? 1;
  const last = Math.max(record.hop_count, ...replies.map((r) => r.probe_ttl));
  const ttls = Array.from({ length: last - first + 1 }, (_, i) => first + i);
  // With -Q scamper sends every attempt at every TTL; probe_count, all probes sent, shows which.
  const everyAttempt = record.probe_count === ttls.length * record.attempts;
  const hops = ttls.map((ttl) => {
    const here = replies.filter((r) => r.probe_ttl === ttl);
    const sent = everyAttempt || !here.length ? record.attempts : Math.max(...here.map((r) => r.probe_id));
    const outcomes = Array.from({ length: sent }, (_, i) => {
      // "*" or "": scamper kept the probe but not who answered.
      const r = here.find((x) => x.probe_id === i + 1 && x.addr && x.addr !== '*');
      if (!r) return { ip: null, rtt: null, err: null };
      const unreachable = (record.dst.includes(':') ? 1 : 3) === r.icmp_type;
      const portFromTarget = unreachable && r.addr === record.dst && r.icmp_code === (record.dst.includes(':') ? 4 : 3);
      const letters: Record<number, string> = record.dst.includes(':') ? { 0: 'N', 1: 'A', 2: 'h', 3: 'H', 4: 'p' } : { 0: 'N', 1: 'H', 2: 'P', 3: 'p', 13: 'A' };
      return { ip: r.addr, rtt: r.rtt, err: unreachable && !portFromTarget ? (letters[r.icmp_code] ?? String(r.icmp_code)) : null };
    });
    return hopFrom(ttl, outcomes, [], [], enricher);
  });
  return summed(`scamper:${host}:${record.src}:${record.dst}:${record.start.sec * 1000 + Math.floor(record.start.usec / 1000)}`, hops);
}

function summed(key: string, hops: Hop[]): Trace {
  const sent = hops.reduce((n, h) => n + h.sent, 0);
  const received = hops.reduce((n, h) => n + h.received, 0);
  const error = sent === 0 && hops.some((h) => h.errors.length) ? hops.flatMap((h) => h.errors).join('; ') : null;
  return { key, hopCount: hops.length, respondingHops: hops.filter((h) => h.received > 0).length, loss: sent ? round3(1 - received / sent) : 1, error, hops };
}

/** Every trace record of the fixtures, read independently. */
function expectedTraces(enricher: IpEnricher): Trace[] {
  const traces: Trace[] = [];
  for (const file of FIXTURES) {
    let host: string | null = null;
    for (const line of readFileSync(`${DATA}/${file}`, 'utf8').split('\n').filter((l) => l.trim())) {
      const record = JSON.parse(line);
      if ('msm_id' in record) traces.push(readAtlas(record, enricher));
      else if (record.type === 'cycle-start') host = record.hostname;
      else if (record.type === 'trace') traces.push(readScamper(record, host, enricher));
      else if (record.Trace) traces.push(readScamper(record.Trace, record.CycleStart.hostname, enricher));
    }
  }
  return traces;
}

const TRACE = `query($id: ID!) { trace(id: $id) { status stopReason error hopCount respondingHops loss rttMs asPath probeAsn
  hops { hop ip rtts rttAvg sent received loss late duplicates otherDestination errors ixp asn
    responders { ip received rtts errors ixp asn } strayReplies { kind ip lateBy destination } } } }`;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;
let enricher: IpEnricher;
const reader = principalFor('reader', 'traceroute');
/** Stored traces by `<measurement key>:<epoch ms>`. */
const stored = new Map<string, Json>();

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  subgraph = await createTracerouteSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, keyStore: new LocalKeyStore(identityOrm) });
  enricher = await sharedIpEnricher();
  for (const file of FIXTURES) {
    const report = await new TraceImporter(subgraph.orm.em.fork(), enricher).run(readFileRecords(`${DATA}/${file}`));
    expect(report.skipped).toEqual([]);
  }
  const rows = await subgraph.orm.em.getConnection().execute<{ id: string; measurement_key: string; measured_at: Date }[]>(
    'select id, measurement_key, measured_at from "traceroute"."trace"',
  );
  for (const row of rows) {
    const result = await run<{ trace: Json }>(subgraph, reader, TRACE, { id: row.id });
    expect(result.errors).toBeUndefined();
    stored.set(`${row.measurement_key}:${new Date(row.measured_at).getTime()}`, result.data!.trace);
  }
}, 120_000);

afterAll(async () => {
  await subgraph?.close();
  await identityOrm?.close(true);
  await db?.drop();
});

describe('every hop of every fixture trace', () => {
  it('matches an independent reading of its source record', () => {
    const expected = expectedTraces(enricher);
    expect(expected.length).toBe(stored.size);
    for (const trace of expected) {
      const got = stored.get(trace.key);
      expect(got, trace.key).toBeDefined();
      expect({ key: trace.key, hopCount: got!.hopCount, respondingHops: got!.respondingHops, loss: got!.loss, error: got!.error }).toEqual({
        key: trace.key, hopCount: trace.hopCount, respondingHops: trace.respondingHops, loss: trace.loss, error: trace.error,
      });
      for (const [index, hop] of trace.hops.entries()) {
        const { ixp: _ixp, ...want } = hop;
        const { ixp: _got, responders, ...rest } = got!.hops[index];
        expect({ key: trace.key, ...rest, responders: responders.map((r: Json) => ({ ip: r.ip, received: r.received, rtts: r.rtts, errors: r.errors })) }).toEqual({ key: trace.key, ...want });
      }
    }
  });
});

describe('the measurements the issue names', () => {
  const atlas = (msm: number, probe: number) => [...stored].find(([key]) => key.startsWith(`atlas:${msm}:${probe}:`))![1];
  const scamper = (dst: string) => [...stored].filter(([key]) => key.startsWith(`scamper:vm:10.33.1.2:${dst}:`)).map(([, t]) => t);

  it('lists each responder of a load-balanced hop with its own RTTs and enrichment; the exchange LAN is flagged', () => {
    const hop = atlas(5151, 60101).hops[3];
    expect(hop.responders).toEqual([
      { ip: '195.69.145.176', received: 2, rtts: [28.391, 28.502], errors: [], ixp: 'AMS-IX', asn: 1200 },
      { ip: '194.187.172.101', received: 1, rtts: [8.927], errors: [], ixp: null, asn: 35574 },
    ]);
    expect(hop).toMatchObject({ ip: '195.69.145.176', rttAvg: 28.447, rtts: [8.927, 28.391, 28.502], sent: 3, received: 3, ixp: 'AMS-IX' });
  });

  it('keeps late answers apart: the router that answered in time stays, and a hop of late answers and stars has no responder', () => {
    const trace = atlas(5151, 60101);
    expect(trace.hops[2]).toMatchObject({ ip: '39.45.0.1', sent: 3, received: 3, loss: 0, late: 3 });
    expect(trace.hops[2].strayReplies).toEqual(Array(3).fill({ kind: 'late', ip: '10.0.0.1', lateBy: 1, destination: null }));
    expect(trace.hops[5]).toMatchObject({ ip: null, responders: [], sent: 3, received: 0, loss: 1, late: 3, rtts: [null, null, null] });
  });

  it('keeps duplicates and answers for another destination out of sent, received and the RTTs', () => {
    const hop = atlas(5151, 60101).hops[4];
    expect(hop).toMatchObject({ ip: '72.14.218.1', sent: 2, received: 2, rtts: [30.117, 29.83], duplicates: 1, otherDestination: 1 });
    expect(hop.strayReplies).toEqual([
      { kind: 'duplicate', ip: '72.14.218.1', lateBy: null, destination: null },
      { kind: 'other_destination', ip: '108.170.241.1', lateBy: null, destination: '8.8.4.4' },
    ]);
  });

  it('drops private hops, exchange LANs and the probe echoed by its NAT from the AS path', () => {
    const trace = atlas(5151, 60101);
    expect(trace.probeAsn).toBe(17557);
    expect(trace.asPath).toEqual([17557, 15169, 25152]);
    expect(trace).toMatchObject({ status: 'completed', stopReason: 'completed', rttMs: 40.443 });
  });

  it('counts a scamper probe that went unanswered: probes 1 and 2 of 3 silent is sent 3, received 1', () => {
    const [, , rateLimited] = scamper('10.33.3.2').sort((a, b) => a.hops[1].sent - b.hops[1].sent);
    expect(rateLimited.hops[1]).toMatchObject({ ip: '10.33.2.2', sent: 3, received: 1, loss: 0.667, rtts: [null, null, 0.072] });
  });

  it('keeps the silent hops of a scamper trace stopped by its gap limit, and says why each trace stopped', () => {
    const [gap] = scamper('10.33.6.9');
    expect(gap).toMatchObject({ stopReason: 'gaplimit', status: 'failed', hopCount: 5, respondingHops: 2, loss: 0.75 });
    expect(gap.hops.map((h: Hop) => [h.hop, h.sent, h.received])).toEqual([[1, 1, 1], [2, 1, 1], [3, 2, 0], [4, 2, 0], [5, 2, 0]]);
    expect(scamper('10.33.10.10')[0].stopReason).toBe('loop');
    expect(scamper('10.33.9.9')[0]).toMatchObject({ stopReason: 'unreach', status: 'failed' });
    expect(scamper('10.33.9.9')[0].hops[1].errors).toEqual(['H']);
    expect(scamper('10.33.7.7')[0].hops[0].errors).toEqual(['N']);
    expect(scamper('10.33.8.8')[0].hops[1].errors).toEqual(['A']);
    expect(atlas(5156, 60106)).toMatchObject({ stopReason: 'gaplimit', hopCount: 8 });
    expect(atlas(5152, 60102)).toMatchObject({ stopReason: 'unreach', status: 'failed' });
  });

  it('reads port unreachable from the target as arrival, not as an error', () => {
    for (const trace of scamper('10.33.3.2')) {
      expect(trace).toMatchObject({ status: 'completed', stopReason: 'completed' });
      expect(trace.hops.at(-1).errors).toEqual([]);
    }
  });

  it('keeps the ICMP errors in their words: Atlas letters and codes as given', () => {
    expect(atlas(5153, 60103).hops[2].errors).toEqual(['A', 'A', '10']);
    expect(atlas(5154, 60104).hops[1].errors).toEqual(['H', 'h']);
    expect(atlas(5155, 60105).hops[1].errors).toEqual(['P', 'p', 'n']);
  });

  it('sets the trace error when the measurement failed before its first probe', () => {
    expect(atlas(24304870, 1004666)).toMatchObject({ status: 'failed', stopReason: 'error', error: 'bind failed: Invalid argument', hopCount: 1 });
    expect(atlas(5006, 1000318)).toMatchObject({ status: 'failed', stopReason: 'error', error: 'sendto failed: Operation not permitted' });
  });
});
