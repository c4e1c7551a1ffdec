import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../../identity/index.js';
import { LocalKeyStore } from '../../../identity/local-key-store.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { sharedIpEnricher, type IpEnricher } from '../../../subgraphs/traceroute/enrichment/ip-enricher.js';
import { createTracerouteSubgraph } from '../../../subgraphs/traceroute/index.js';
import { readFileRecords, readTextRecords } from '../../../subgraphs/traceroute/ingest/record-reader.js';
import { TraceImporter } from '../../../subgraphs/traceroute/ingest/trace-importer.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

/**
 * Enrichment as of the measurement: what the source said of its probe and target wins over
 * today's databases, each trace names where each figure came from, reverse DNS names the source
 * has are kept, and coordinates say no more than the database resolves.
 */
const DATA = path.resolve(import.meta.dirname, '../../fixtures/traceroute');
type Json = Record<string, any>;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;
let enricher: IpEnricher;
const reader = principalFor('reader', 'traceroute');
const traces = new Map<string, Json>();

const QUERY = `query($id: ID!) { trace(id: $id) { msmId probeId probeIp probeCountry probeCity probeLatitude probeLongitude probeAsn probeAsName
  targetIp targetCountry targetCity targetLatitude targetLongitude targetAsn targetAsName asPath direction
  provenance { probeCountry probeCity probeCoordinates probeAsn targetLocation targetAsn hopLocation hopAsn }
  hops { hostname latitude longitude asn responders { ip hostname latitude longitude } } } }`;

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  subgraph = await createTracerouteSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, keyStore: new LocalKeyStore(identityOrm) });
  enricher = await sharedIpEnricher();
  for (const file of ['ripe-atlas-probe-metadata-constructed.json', 'ripe-atlas-traceroutes.jsonl', 'ripe-atlas-quirks-constructed.jsonl', 'scamper2-valid-simple-json.jsonl']) {
    const report = await new TraceImporter(subgraph.orm.em.fork(), enricher).run(readFileRecords(`${DATA}/${file}`));
    expect(report.skipped, file).toEqual([]);
  }
  const rows = await subgraph.orm.em.getConnection().execute<{ id: string; measurement_key: string; measured_at: Date }[]>('select id, measurement_key, measured_at from "traceroute"."trace"');
  for (const row of rows) {
    const result = await run<{ trace: Json }>(subgraph, reader, QUERY, { id: row.id });
    expect(result.errors).toBeUndefined();
    traces.set(`${row.measurement_key}:${new Date(row.measured_at).getTime()}`, result.data!.trace);
  }
}, 60_000);

afterAll(async () => {
  await subgraph?.close();
  await identityOrm?.close(true);
  await db?.drop();
});

const atlas = (msm: number, probe: number) => [...traces].find(([key]) => key.startsWith(`atlas:${msm}:${probe}:`))![1];

describe('probe and target metadata from the source', () => {
  it("wins over today's databases: a probe they place in France is where its file says", () => {
    const today = enricher.lookup('185.219.13.69');
    expect(today).toMatchObject({ country: 'FR', city: 'Bondy', asn: 205344 });
    const trace = atlas(5157, 60107);
    expect(trace).toMatchObject({
      probeIp: '185.219.13.69', probeCountry: 'UA', probeCity: null, probeLatitude: 50.4501, probeLongitude: 30.5234,
      probeAsn: 15895, probeAsName: enricher.asName(15895),
      // The RIS beacon's AS, from the file's meta_data: today's ASN table knows none for it.
      targetIp: '84.205.77.1', targetAsn: 12654, targetAsName: enricher.asName(12654),
    });
    expect(enricher.lookup('84.205.77.1').asn).toBeNull();
    expect(trace.asPath[0]).toBe(15895);
    expect(trace.provenance).toEqual({
      probeCountry: 'source metadata', probeCity: null, probeCoordinates: 'source metadata', probeAsn: 'source metadata',
      targetLocation: enricher.sources.location, targetAsn: 'source metadata', hopLocation: enricher.sources.location, hopAsn: enricher.sources.asn,
    });
  });

  it('reads a probe given with its result, and drops a database position in another country than the source says', () => {
    expect(enricher.lookup('86.110.147.43')).toMatchObject({ country: 'IT', city: 'Maranello' });
    const trace = atlas(5158, 60108);
    expect(trace).toMatchObject({ probeCountry: 'DE', probeCity: null, probeLatitude: null, probeLongitude: null, probeAsn: 3320, targetAsn: 3557 });
    expect(trace.provenance).toMatchObject({ probeCountry: 'source metadata', probeCity: null, probeCoordinates: null, probeAsn: 'source metadata', targetAsn: enricher.sources.asn });
  });

  it('keeps what the database adds where the source agrees, and says so figure by figure', () => {
    const trace = atlas(5159, 60109);
    expect(trace).toMatchObject({ probeCountry: 'FR', probeCity: 'Bondy', probeAsn: 205344, targetAsn: null });
    expect(trace.probeLatitude).toBe(enricher.lookup('185.219.13.69').latitude);
    expect(trace.provenance).toMatchObject({
      probeCountry: 'source metadata', probeCity: enricher.sources.location, probeCoordinates: enricher.sources.location, probeAsn: 'source metadata',
      // meta_data is the file's for measurement 5157 only.
      targetAsn: null,
    });
  });

  it('applies the file metadata of one measurement to that measurement only, and a record without any to none', async () => {
    const plain = atlas(29792007, 53023);
    expect(plain).toMatchObject({ probeCountry: 'FR', probeAsn: 205344 });
    expect(plain.provenance).toMatchObject({ probeCountry: enricher.sources.location, probeAsn: enricher.sources.asn, probeCoordinates: enricher.sources.location });
  });

  it('names each database with the date it was built', () => {
    expect(enricher.sources.location).toMatch(/^GeoLite2 City \d{4}-\d\d-\d\d$/);
    expect(enricher.sources.asn).toMatch(/^ip-location-db ASN \d{4}-\d\d-\d\d$/);
  });

  it('ignores metadata that is not a figure (a bad country code, an ASN that is not a number)', async () => {
    const record = JSON.parse((await import('node:fs')).readFileSync(`${DATA}/ripe-atlas-traceroutes.jsonl`, 'utf8').split('\n')[2]);
    const odd = { ...record, msm_id: 5160, probe: { id: record.prb_id, country_code: 'Ukraine', asn_v4: '15895', geometry: { coordinates: [300, 95] } }, meta_data: { dst_asn: -4 } };
    expect(await new TraceImporter(subgraph.orm.em.fork(), enricher).run(readTextRecords(JSON.stringify(odd)))).toMatchObject({ stored: 1 });
    const [row] = await subgraph.orm.em.getConnection().execute<{ id: string }[]>(`select id from "traceroute"."trace" where msm_id = 5160`);
    const trace = (await run<{ trace: Json }>(subgraph, reader, QUERY, { id: row.id })).data!.trace;
    expect(trace).toMatchObject({ probeCountry: 'FR', probeAsn: 205344, probeCity: 'Bondy' });
    expect(trace.provenance.probeCountry).toBe(enricher.sources.location);
  });
});

describe('reverse DNS names and coordinates', () => {
  it('keeps the names the source has, on the hop and on its responder', () => {
    const [, trace] = [...traces].find(([key]) => key.startsWith('scamper:'))!;
    const named = trace.hops.filter((h: Json) => h.hostname);
    expect(named.map((h: Json) => h.hostname)).toEqual(['ool-4353f791.dyn.optonline.net']);
    expect(named[0].responders[0].hostname).toBe('ool-4353f791.dyn.optonline.net');
    // scamper writes "" where it has no name: no name, not an empty one.
    expect(trace.hops.every((h: Json) => h.hostname === null || h.hostname.length > 0)).toBe(true);
  });

  it('rounds every coordinate to the four decimals GeoLite2 resolves', () => {
    const coordinates = [...traces.values()].flatMap((t) => [
      t.probeLatitude, t.probeLongitude, t.targetLatitude, t.targetLongitude,
      ...t.hops.flatMap((h: Json) => [h.latitude, h.longitude, ...h.responders.flatMap((r: Json) => [r.latitude, r.longitude])]),
    ]).filter((c) => c !== null);
    expect(coordinates.length).toBeGreaterThan(100);
    for (const c of coordinates) expect(Math.round(c * 10_000) / 10_000).toBe(c);
    expect(coordinates.some((c) => String(c).split('.')[1]?.length === 4)).toBe(true);
  });
});
