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
import { expectSameTrace, readAtlas, readScamper, TRACE_FIELDS, type Hop, type Json, type Trace } from './independent-reading.js';

/**
 * Every hop of every fixture trace, stored and read back over GraphQL, against an independent
 * reading of its source record (independent-reading.ts: deliberately plain, sharing no code with
 * the importer); the hand-written cases after it pin the measurements the issue names.
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

const TRACE = `query($id: ID!) { trace(id: $id) { ${TRACE_FIELDS} } }`;

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
    for (const trace of expected) expectSameTrace(stored.get(trace.key), trace);
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
