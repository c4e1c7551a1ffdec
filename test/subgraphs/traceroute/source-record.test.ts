import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../../identity/index.js';
import { LocalKeyStore } from '../../../identity/local-key-store.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { sharedIpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';
import { createTracerouteSubgraph } from '../../../subgraphs/traceroute/index.js';
import { elementTexts, readFileRecords, readTextRecords } from '../../../subgraphs/traceroute/ingest/record-reader.js';
import { SyntheticTraceGenerator } from '../../../subgraphs/traceroute/ingest/synthetic-generator.js';
import { TraceImporter } from '../../../subgraphs/traceroute/ingest/trace-importer.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

/** Each trace keeps its measurement record exactly as the imported file had it. */
const DATA = path.resolve(import.meta.dirname, '../../fixtures/traceroute');
const lines = (file: string) => readFileSync(`${DATA}/${file}`, 'utf8').split('\n').filter((l) => l.trim());

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;
const reader = principalFor('reader', 'traceroute');

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  subgraph = await createTracerouteSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, keyStore: new LocalKeyStore(identityOrm) });
}, 60_000);

afterAll(async () => {
  await subgraph?.close();
  await identityOrm?.close(true);
  await db?.drop();
});

const importer = async () => new TraceImporter(subgraph.orm.em.fork(), await sharedIpEnricher());
const RECORD = `query($id: ID!) { traceRecord(id: $id) { traceId source record } }`;

/** The stored traces' records, by the record's measurement time and target. */
async function records(): Promise<Map<string, { traceId: string; source: string; record: string }>> {
  const rows = await subgraph.orm.em.getConnection().execute<{ id: string }[]>('select id from "traceroute"."trace"');
  const found = new Map();
  for (const { id } of rows) {
    const result = await run<{ traceRecord: { traceId: string; source: string; record: string } }>(subgraph, reader, RECORD, { id });
    expect(result.errors).toBeUndefined();
    found.set(id, result.data!.traceRecord);
  }
  return found;
}

async function clear() {
  await subgraph.orm.em.getConnection().execute('delete from "traceroute"."trace"');
}

describe('traceRecord', () => {
  it('is each line of a JSON-lines file, byte for byte, RIPE Atlas and scamper alike', async () => {
    await clear();
    for (const file of ['ripe-atlas-traceroutes.jsonl', 'ripe-atlas-quirks.jsonl', 'scamper-lab.jsonl']) {
      expect((await (await importer()).run(readFileRecords(`${DATA}/${file}`))).skipped).toEqual([]);
    }
    const got = [...(await records()).values()];
    const want = [...lines('ripe-atlas-traceroutes.jsonl'), ...lines('ripe-atlas-quirks.jsonl'), ...lines('scamper-lab.jsonl').filter((l) => l.includes('"type":"trace"'))];
    expect(got.map((r) => r.record).sort()).toEqual(want.sort());
    expect(new Set(got.map((r) => r.source))).toEqual(new Set(['ripe_atlas', 'scamper']));
  });

  it('is the whole line of traceroute-caller\'s one-object form', async () => {
    await clear();
    await (await importer()).run(readFileRecords(`${DATA}/scamper2-valid-simple-json.jsonl`));
    expect([...(await records()).values()].map((r) => r.record)).toEqual(lines('scamper2-valid-simple-json.jsonl'));
  });

  it('is the element\'s own text in a pretty-printed array and in a {results} wrapper, spacing, escapes and number spellings kept', async () => {
    const [first, second] = lines('ripe-atlas-traceroutes.jsonl').map((l) => JSON.parse(l));
    // Written by hand, as a tool might: odd spacing, 1.50 and 1e0 spellings, an escaped quote and brackets inside a string.
    const one = `{ "msm_name" : "Trace \\"[x]\\" {y}", "timestamp": ${first.timestamp}, "msm_id": 1, "prb_id": ${first.prb_id}, "af": 4, "dst_addr": "${first.dst_addr}", "from": "${first.from}", "src_addr": "${first.src_addr}", "proto": "ICMP", "result": [ {"hop": 1, "result": [{"from": "192.168.16.1", "rtt": 1.50, "ttl": 64}, {"x": "*"}, {"from": "192.168.16.1", "rtt": 1e0}]} ] }`;
    const two = JSON.stringify({ ...second, msm_id: 1 }, null, 4);
    for (const document of [`[\n  ${one} ,\n${two}\n]\n`, `{"source": "hand", "results": [ ${one},\t${two} ], "results_count": 2}`, `{"results":[${one},${two}]}`]) {
      await clear();
      const report = await (await importer()).run(readTextRecords(document));
      expect(report).toMatchObject({ stored: 2, skipped: [] });
      expect([...(await records()).values()].map((r) => r.record).sort()).toEqual([one, two].sort());
    }
  });

  it('refuses, as NOT_FOUND record_not_kept, a generated trace and one imported before records were kept; null for an unknown id', async () => {
    await clear();
    await (await importer()).store(new SyntheticTraceGenerator(await sharedIpEnricher(), 3).generate(1));
    await (await importer()).run(readFileRecords(`${DATA}/ripe-atlas-quirks.jsonl`));
    const rows = await subgraph.orm.em.getConnection().execute<{ id: string; source: string }[]>('select id, source from "traceroute"."trace" order by source desc');
    const synthetic = rows.find((r) => r.source === 'synthetic')!;
    const atlas = rows.find((r) => r.source === 'ripe_atlas')!;
    const generated = await run(subgraph, reader, RECORD, { id: synthetic.id });
    expect(generated.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'record_not_kept' });
    expect(generated.errors?.[0].message).toMatch(/generated/);
    await subgraph.orm.em.getConnection().execute('update "traceroute"."trace" set source_record = null where id = ?', [atlas.id]);
    const older = await run(subgraph, reader, RECORD, { id: atlas.id });
    expect(older.errors?.[0].extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'record_not_kept' });
    expect(older.errors?.[0].message).toMatch(/imported before source records were kept/);
    for (const id of ['0190f000-0000-7000-8000-000000000000', 'not-a-uuid', '2c0a86c6-2ab5-4c36-9ab8-5bcb0e2d5a1f', 'ffffffff-ffff-7fff-bfff-ffffffffffff']) {
      const unknown = await run(subgraph, reader, RECORD, { id });
      expect(unknown.errors).toBeUndefined();
      expect(unknown.data!.traceRecord).toBeNull();
    }
  });
});

describe('elementTexts', () => {
  it('cuts an array and a {results} wrapper into their elements as written', () => {
    expect(elementTexts('[ 1 , "a]\\"," ,{"b":[1,{"c":"}"}]} ,null,\n[] ]')).toEqual(['1', '"a]\\","', '{"b":[1,{"c":"}"}]}', 'null', '[]']);
    expect(elementTexts('[]')).toEqual([]);
    expect(elementTexts('{"a": {"results": [9]}, "results" : [ {"x":1}, 2 ], "z": "]"}')).toEqual(['{"x":1}', '2']);
    expect(elementTexts('{"results": [1], "results": [2, 3]}')).toEqual(['2', '3']);
  });
});
