/**
 * bench/marketplace-bids: GET /tenders/{id}/bids over one tender with BENCH_BIDS (10,000) sealed
 * bids, through the real REST edge (edge, gateway, marketplace subgraph). BENCH_SERVICE_BIDS of
 * them (200) are placed through the API like a vendor would (registration, qualification by an
 * admin key, POST /tenders/{id}/bid with its receipt); the rest are written by direct SQL with the
 * same receipt rows. The deadline is then moved into the past, and the buyer reads the bids: the
 * first page (limit 100) BENCH_SAMPLES times, and every page, one after another, BENCH_PASSES
 * times; the first page is also timed as one direct SQL statement. Run on demand:
 * `npm run bench:marketplace-bids` (DATABASE_URL to use a running PostgreSQL).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../platform/config.js';
import { openPlatformDatabase } from '../platform/database.js';
import { openIdentityStore } from '../identity/index.js';
import { IdentityService } from '../identity/identity.service.js';
import { createLogger } from '../core/logger.js';
import { startPlatform } from '../platform/platform.js';
import { canonicalJson, receiptContent, sha256Hex } from '../subgraphs/marketplace/bid/bid-receipt.js';
import type { Bid } from '../subgraphs/marketplace/bid/bid.entity.js';
import { percentile } from './bench-platform.js';

const bids = Number(process.env.BENCH_BIDS ?? 10_000);
const serviceBids = Math.min(bids, Number(process.env.BENCH_SERVICE_BIDS ?? 200));
const samples = Number(process.env.BENCH_SAMPLES ?? 200);
const passes = Number(process.env.BENCH_PASSES ?? 5);
const pageSize = 100;

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-marketplace-bids-'));
const config = {
  ...loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT ?? '5498' }),
  port: 0,
  host: '127.0.0.1',
  subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
  // A bench measures latency, not the per-key limit.
  rateLimits: { ...loadConfig({}).rateLimits, livePerMinute: 10_000_000 },
};
const database = await openPlatformDatabase({ databaseUrl: config.databaseUrl, dataDir, embeddedPort: config.embeddedDatabasePort });
const platform = await startPlatform(config, database.url, createLogger('silent'));
const identityOrm = await openIdentityStore(database.url);
const sql = new pg.Client({ connectionString: database.url });
await sql.connect();

function summary(times: number[]): { p50: number; p99: number } {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function timed(n: number, fn: () => Promise<void>): Promise<number[]> {
  for (let i = 0; i < Math.max(3, Math.ceil(n / 10)); i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times;
}

try {
  const identity = new IdentityService(identityOrm.em.fork());
  const keyOf = async (account: string, kind: 'live' | 'admin' = 'live') => (await identity.createKey({ account, kind })).secret;
  const call = async (key: string, url: string, init: { method?: string; json?: unknown } = {}, expected = 200) => {
    const response = await fetch(`${platform.baseUrl}${url}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${key}`, ...(init.json ? { 'content-type': 'application/json' } : {}) },
      body: init.json ? JSON.stringify(init.json) : undefined,
    });
    const text = await response.text();
    if (response.status !== expected) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
  const buyer = await keyOf('bench-buyer');
  const admin = await keyOf('bench-ops', 'admin');
  const tender = await call(buyer, '/api/v1/tenders', {
    method: 'POST',
    json: { title: 'Bench tender', description: 'Many bids', value: { amount: 1_000_000, currency: 'EUR' }, tenderPeriod: { endDate: new Date(Date.now() + 3_600_000).toISOString() }, publish: true },
  }, 201);

  let started = performance.now();
  const placeTimes: number[] = [];
  for (let i = 0; i < serviceBids; i++) {
    const key = await keyOf(`bench-vendor-${i}`);
    const vendor = await call(key, '/api/v1/vendors', { method: 'POST', json: { name: `Vendor ${i}`, country: 'DE', registrationNumber: `HRB ${i}`, contactEmail: `v${i}@bench.example`, categories: ['bench'] } }, 201);
    await call(admin, '/graphql', { method: 'POST', json: { query: `mutation { qualifyVendor(id: "${vendor.id}", status: APPROVED) { id } }` } });
    const start = performance.now();
    await call(key, `/api/v1/tenders/${tender.id}/bid`, { method: 'POST', json: { amount: 1000 + i, currency: 'EUR', qualityAnswers: ['bench'] } }, 201);
    placeTimes.push(performance.now() - start);
  }
  const placing = summary(placeTimes);
  console.log(`\nplaced ${serviceBids} bids through POST /tenders/{id}/bid (registration and qualification first) in ${((performance.now() - started) / 1000).toFixed(1)} s; POST bid p50 ${placing.p50.toFixed(1)} ms, p99 ${placing.p99.toFixed(1)} ms`);

  started = performance.now();
  const accountId = (await sql.query<{ account_id: string }>('select account_id from marketplace.tender where id = $1', [tender.id])).rows[0].account_id;
  void accountId;
  await sql.query('begin');
  const batch = 1000;
  for (let from = serviceBids; from < bids; from += batch) {
    const vendorRows: unknown[][] = [];
    const bidRows: unknown[][] = [];
    const receiptRows: unknown[][] = [];
    for (let i = from; i < Math.min(bids, from + batch); i++) {
      const vendorAccount = randomUUID();
      const vendorId = randomUUID();
      const at = new Date(Date.now() - (bids - i) * 10);
      vendorRows.push([vendorId, vendorAccount, `Vendor ${i}`, `HRB ${i}`, `v${i}@bench.example`]);
      const bid = { id: randomUUID(), version: 1, tenderId: tender.id, lotId: null, vendorId, amount: (1000 + i).toFixed(2), currency: 'EUR', documents: [], qualityAnswers: ['bench'] } as unknown as Bid;
      bidRows.push([bid.id, vendorAccount, tender.id, vendorId, bid.amount, at]);
      const canonical = canonicalJson(receiptContent(bid, at));
      receiptRows.push([randomUUID(), vendorAccount, bid.id, canonical, sha256Hex(canonical), at]);
    }
    const values = (rows: unknown[][], cols: number) => rows.map((_, r) => `(${Array.from({ length: cols }, (_, c) => `$${r * cols + c + 1}`).join(', ')})`).join(', ');
    await sql.query(
      `insert into marketplace.vendor (id, account_id, mode, name, country, registration_number, contact_email, categories, status, created_at, updated_at)
       select v.id::uuid, v.account::uuid, 'live', v.name, 'DE', v.reg, v.email, '["bench"]'::jsonb, 'approved', now(), now() from (values ${values(vendorRows, 5)}) v(id, account, name, reg, email)`,
      vendorRows.flat(),
    );
    await sql.query(
      `insert into marketplace.bid (id, account_id, mode, tender_id, lot_id, vendor_id, amount, currency, documents, quality_answers, status, terms_version, version, created_at, updated_at)
       select b.id::uuid, b.account::uuid, 'live', b.tender::uuid, null, b.vendor::uuid, b.amount::numeric, 'EUR', '[]'::jsonb, '["bench"]'::jsonb, 'active', 1, 1, b.at::timestamptz, b.at::timestamptz
         from (values ${values(bidRows, 6)}) b(id, account, tender, vendor, amount, at)`,
      bidRows.flat(),
    );
    await sql.query(
      `insert into marketplace.bid_receipt (id, account_id, mode, bid_id, version, canonical, sha256, recorded_at)
       select r.id::uuid, r.account::uuid, 'live', r.bid::uuid, 1, r.canonical, r.sha, r.at::timestamptz from (values ${values(receiptRows, 6)}) r(id, account, bid, canonical, sha, at)`,
      receiptRows.flat(),
    );
  }
  // Past the deadline: the first read settles the tender (EVALUATION) and unseals the bids for the buyer.
  await sql.query(`update marketplace.tender set tender_period_end = clock_timestamp() - interval '1 second' where id = $1`, [tender.id]);
  await sql.query('commit');
  await sql.query('analyze marketplace.bid, marketplace.bid_receipt, marketplace.vendor, marketplace.tender');
  const count = (await sql.query(`select count(*)::int as n from marketplace.bid where tender_id = $1`, [tender.id])).rows[0].n;
  console.log(`wrote ${bids - serviceBids} more bids (vendors, bids, receipts) by direct SQL in ${((performance.now() - started) / 1000).toFixed(1)} s; ${count} bids on the tender`);
  const settled = await call(buyer, `/api/v1/tenders/${tender.id}`);
  if (settled.status !== 'EVALUATION' || settled.bidCount !== count) throw new Error(`tender not settled: ${settled.status}, ${settled.bidCount}`);

  const firstPage = async () => {
    const page = await call(buyer, `/api/v1/tenders/${tender.id}/bids?limit=${pageSize}`);
    if (page.data.length !== pageSize || !page.data[0].receipts?.length) throw new Error('unexpected first page');
  };
  const firstPageTimes = await timed(samples, firstPage);
  const directSql = `select b.*, (select json_agg(r order by r.version) from marketplace.bid_receipt r where r.bid_id = b.id) as receipts
                       from marketplace.bid b where b.tender_id = $1 order by b.created_at desc, b.id desc limit ${pageSize + 1}`;
  const directTimes = await timed(samples, async () => void (await sql.query(directSql, [tender.id])));

  const pageTimes: number[] = [];
  const passTimes: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    const passStart = performance.now();
    let cursor: string | null = null;
    let seen = 0;
    do {
      const start = performance.now();
      const page: { data: unknown[]; nextCursor: string | null } = await call(buyer, `/api/v1/tenders/${tender.id}/bids?limit=${pageSize}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`);
      pageTimes.push(performance.now() - start);
      seen += page.data.length;
      cursor = page.nextCursor;
    } while (cursor);
    passTimes.push(performance.now() - passStart);
    if (seen !== count) throw new Error(`paged ${seen} bids of ${count}`);
  }

  const first = summary(firstPageTimes);
  const direct = summary(directTimes);
  const pages = summary(pageTimes);
  const full = summary(passTimes);
  console.log(`\nmarketplace-bids bench: ${count} bids on one tender (${serviceBids} placed through the API), pages of ${pageSize} with their receipts, the buyer after the deadline; one request at a time; node ${process.version}\n`);
  console.log('measure                                              p50 (ms)   p99 (ms)');
  console.log(`${'GET /tenders/{id}/bids first page (REST)'.padEnd(52)}${first.p50.toFixed(1).padStart(9)}${first.p99.toFixed(1).padStart(11)}`);
  console.log(`${'  same page, one direct SQL statement'.padEnd(52)}${direct.p50.toFixed(1).padStart(9)}${direct.p99.toFixed(1).padStart(11)}`);
  console.log(`${`any page while paging all ${Math.ceil(count / pageSize)} pages (REST)`.padEnd(52)}${pages.p50.toFixed(1).padStart(9)}${pages.p99.toFixed(1).padStart(11)}`);
  console.log(`${`full paging through all ${count} bids (${passes} passes)`.padEnd(52)}${full.p50.toFixed(1).padStart(9)}${full.p99.toFixed(1).padStart(11)}`);
  console.log(`\n(first page: ${samples} samples after a warm-up; ratio REST/SQL p50 ${(first.p50 / direct.p50).toFixed(2)}, p99 ${(first.p99 / direct.p99).toFixed(2)})\n`);
} finally {
  await sql.end();
  await identityOrm.close();
  await platform.stop();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
