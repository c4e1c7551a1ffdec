/**
 * bench/documents: the document pipeline at volume. Three figures:
 * 1. upload-to-ready for BENCH_DOCUMENTS (1,000) mixed documents (text, CSV, Markdown, HTML, text-layer
 *    PDFs, DOCX, OCR'd PNGs) uploaded through POST /documents/upload, processed by two workers (the
 *    platform's and a second instance's, one document at a time each): per-document latency
 *    (createdAt → processedAt) and throughput;
 * 2. the platform process's peak RSS while one 25 MiB file is uploaded (streamed from disk by a
 *    child process, so the bench's own buffers are not counted): it must stay flat, not a multiple of the file;
 * 3. GET /documents?q= p50/p99 over BENCH_SEARCH_DOCUMENTS (100,000) documents seeded by SQL.
 * Run on demand: `npm run bench:documents` (BENCH_DOCUMENTS, BENCH_SEARCH_DOCUMENTS, BENCH_SAMPLES,
 * DATABASE_URL to use a running PostgreSQL instead of a temporary embedded one).
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
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
import { openOrm } from '../core/orm.js';
import { membershipOrmOptions } from '../subgraphs/membership/mikro-orm.config.js';
import { createDocumentWorker } from '../subgraphs/membership/document/document-worker.factory.js';
import { docxFile, textPdf, textPng } from '../test/support/document-fixtures.js';
import { percentile } from './bench-platform.js';

const documents = Number(process.env.BENCH_DOCUMENTS ?? 1000);
const searchDocuments = Number(process.env.BENCH_SEARCH_DOCUMENTS ?? 100_000);
const samples = Number(process.env.BENCH_SAMPLES ?? 100);
const MiB = 1024 * 1024;

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-documents-'));
const base = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT ?? '5498' });
const documentSettings = { ...base.documents, workers: 1, timeLimitMs: 120_000 };
const config = {
  ...base,
  port: 0,
  host: '127.0.0.1',
  subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
  rateLimits: { ...base.rateLimits, livePerMinute: 10_000_000 },
  documents: documentSettings,
};
const database = await openPlatformDatabase({ databaseUrl: config.databaseUrl, dataDir, embeddedPort: config.embeddedDatabasePort });
const platform = await startPlatform(config, database.url, createLogger('silent'));
const identityOrm = await openIdentityStore(database.url);
const sql = new pg.Client({ connectionString: database.url });
await sql.connect();
// A second instance's worker on the same queue.
const secondOrm = await openOrm({ clientUrl: database.url, ...membershipOrmOptions });
const secondWorker = createDocumentWorker(secondOrm, documentSettings);

/** Waits until no document is pending or processing. */
async function idle(): Promise<void> {
  for (;;) {
    const { rows } = await sql.query<{ waiting: string }>(`select count(*) as waiting from membership.document where status in ('pending', 'processing')`);
    if (Number(rows[0].waiting) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const ms = (value: number) => `${value.toFixed(1)} ms`;

/** One mixed document, its content unique (no 409 duplicates). */
async function mixed(i: number): Promise<{ bytes: Uint8Array; filename: string }> {
  const words = `document ${i} of the bench, about the association's meeting number ${i * 7}`;
  switch (i % 10) {
    case 0:
    case 1:
      return { bytes: Buffer.from(`Letter ${i}\n\n${words}.\nKind regards,\nThe board\n`), filename: `letter-${i}.txt` };
    case 2:
      return { bytes: Buffer.from(`date,description,amount\n2026-11-${String((i % 28) + 1).padStart(2, '0')},item ${i},${i}.50\n`), filename: `sheet-${i}.csv` };
    case 3:
      return { bytes: Buffer.from(`# Notes ${i}\n\n- ${words}\n- budget ${i} EUR\n`), filename: `notes-${i}.md` };
    case 4:
      return { bytes: Buffer.from(`<!DOCTYPE html><html><body><h1>Report ${i}</h1><p>${words}</p></body></html>`), filename: `report-${i}.html` };
    case 5:
    case 6:
    case 7:
      return { bytes: await textPdf([[`Invoice No. INV-${i}`, words, `Total due: EUR ${i},00`]]), filename: `invoice-${i}.pdf` };
    case 8:
      return { bytes: await docxFile([`Contract ${i}`, words]), filename: `contract-${i}.docx` };
    default:
      return { bytes: textPng([`INVOICE ${i}`, `TOTAL ${i} EUR`]), filename: `scan-${i}.png` };
  }
}

async function upload(secret: string, file: { bytes: Uint8Array; filename: string }): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(file.bytes)]), file.filename);
  const response = await fetch(`${platform.baseUrl}/api/v1/documents/upload`, { method: 'POST', headers: { authorization: `Bearer ${secret}` }, body: form });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`upload ${file.filename}: ${response.status} ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** RSS of the platform (this process) sampled every 5 ms while `run` runs. */
async function peakRss(run: () => Promise<void>): Promise<{ before: number; peak: number }> {
  global.gc?.();
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  try {
    await run();
  } finally {
    clearInterval(timer);
  }
  return { before, peak: Math.max(peak, process.memoryUsage.rss()) };
}

/** Uploads a file from disk in a child process (multipart, chunked), so the client's memory is not ours. */
function uploadFromChild(secret: string, file: string): Promise<string> {
  const script = `
    const fs = require('node:fs'); const http = require('node:http');
    const boundary = 'bench' + Date.now();
    const head = '--' + boundary + '\\r\\nContent-Disposition: form-data; name="file"; filename="big.txt"\\r\\nContent-Type: text/plain\\r\\n\\r\\n';
    const tail = '\\r\\n--' + boundary + '--\\r\\n';
    const size = fs.statSync(process.argv[2]).size;
    const req = http.request(process.argv[1], { method: 'POST', headers: { authorization: 'Bearer ' + process.argv[3], 'content-type': 'multipart/form-data; boundary=' + boundary, 'content-length': Buffer.byteLength(head) + size + Buffer.byteLength(tail) } }, (res) => {
      let body = ''; res.on('data', (c) => body += c); res.on('end', () => { process.stdout.write(res.statusCode + ' ' + body); });
    });
    req.write(head);
    const stream = fs.createReadStream(process.argv[2]);
    stream.pipe(req, { end: false });
    stream.on('end', () => req.end(tail));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, `${platform.baseUrl}/api/v1/documents/upload`, file, secret], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    // Resolved on the answer, not at the child's exit: by then a worker may be processing the file.
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('}')) resolve(out);
    });
    child.on('error', reject);
    child.on('exit', () => resolve(out));
  });
}

try {
  const identity = new IdentityService(identityOrm.em.fork());
  const { secret } = await identity.createKey({ account: 'bench-documents', kind: 'live' });
  const auth = await identity.authenticate(secret);
  if (!auth.ok) throw new Error('the bench key does not authenticate');
  const accountId = auth.principal.accountId;
  secondWorker.start();

  // 1. Upload-to-ready for mixed documents, two workers.
  console.log(`# ${documents} mixed documents (20% txt, 10% csv, 10% md, 10% html, 30% text-layer PDF, 10% DOCX, 10% PNG for OCR), two workers`);
  const files: { bytes: Uint8Array; filename: string }[] = [];
  for (let i = 0; i < documents; i++) files.push(await mixed(i));
  const totalBytes = files.reduce((sum, file) => sum + file.bytes.length, 0);
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < files.length) await upload(secret, files[next++]);
    }),
  );
  const uploaded = performance.now() - started;
  for (;;) {
    const { rows } = await sql.query<{ waiting: string }>(`select count(*) as waiting from membership.document where account_id = $1 and status in ('pending', 'processing')`, [accountId]);
    if (Number(rows[0].waiting) === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const allReady = performance.now() - started;
  const { rows: outcome } = await sql.query<{ status: string; n: string; p50: number; p95: number; max: number }>(
    `select status, count(*) as n,
            percentile_cont(0.5) within group (order by extract(epoch from processed_at - created_at) * 1000) as p50,
            percentile_cont(0.95) within group (order by extract(epoch from processed_at - created_at) * 1000) as p95,
            max(extract(epoch from processed_at - created_at) * 1000) as max
       from membership.document where account_id = $1 group by status`,
    [accountId],
  );
  const { rows: byType } = await sql.query<{ mime_type: string; n: string; p50: number }>(
    `select mime_type, count(*) as n, percentile_cont(0.5) within group (order by extract(epoch from processed_at - created_at) * 1000) as p50
       from membership.document where account_id = $1 group by mime_type order by mime_type`,
    [accountId],
  );
  console.log(`uploads: ${documents} (${(totalBytes / MiB).toFixed(1)} MiB) in ${ms(uploaded)} = ${(documents / (uploaded / 1000)).toFixed(1)} uploads/s (8 clients)`);
  console.log(`all ready after ${ms(allReady)} from the first upload = ${(documents / (allReady / 1000)).toFixed(1)} documents/s processed`);
  for (const row of outcome) console.log(`status ${row.status}: ${row.n}; upload-to-ready p50 ${ms(Number(row.p50))}, p95 ${ms(Number(row.p95))}, max ${ms(Number(row.max))}`);
  for (const row of byType) console.log(`  ${row.mime_type}: ${row.n}, upload-to-ready p50 ${ms(Number(row.p50))}`);

  // 1b. The same on an idle queue: one document at a time, uploaded and waited for.
  const idleLatencies: number[] = [];
  for (let i = 0; i < 30; i++) {
    const file = await mixed(documents + i);
    const t = performance.now();
    const id = await upload(secret, file);
    for (;;) {
      const { rows } = await sql.query<{ status: string }>(`select status from membership.document where id = $1`, [id]);
      if (rows[0].status === 'ready' || rows[0].status === 'failed') break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    idleLatencies.push(performance.now() - t);
  }
  idleLatencies.sort((a, b) => a - b);
  console.log(`idle queue, 30 mixed documents one at a time: upload to ready p50 ${ms(percentile(idleLatencies, 50))}, p95 ${ms(percentile(idleLatencies, 95))}, max ${ms(idleLatencies[idleLatencies.length - 1])}`);

  // 2. Memory during one 25 MiB upload, and during a 5 MiB one for comparison: flat means alike.
  await secondWorker.stop();
  for (const size of [5 * MiB, documentSettings.maxUploadBytes - 64 * 1024]) {
    const big = path.join(dataDir, `big-${size}.txt`);
    await new Promise<void>((resolve, reject) => {
      const out = createWriteStream(big);
      // Unique per size: the second file is not a duplicate of the first.
      const line = Buffer.from(`The quick brown fox jumps over the lazy dog; the association keeps its minutes (${size}).\n`);
      let written = 0;
      const write = () => {
        while (written < size) {
          const piece = line.subarray(0, Math.min(line.length, size - written));
          written += piece.length;
          if (!out.write(piece)) return void out.once('drain', write);
        }
        out.end(resolve);
      };
      out.on('error', reject);
      write();
    });
    // Measured with the worker idle: processing the previous file would count as the upload's.
    await idle();
    let answer = '';
    const memory = await peakRss(async () => {
      answer = await uploadFromChild(secret, big);
    });
    if (!answer.startsWith('201')) throw new Error(`${size} byte upload: ${answer.slice(0, 300)}`);
    console.log(`# memory during one ${(await stat(big)).size} byte upload (${(size / MiB).toFixed(2)} MiB, multipart, streamed from a child process)`);
    console.log(`platform RSS before ${(memory.before / MiB).toFixed(1)} MiB, peak ${(memory.peak / MiB).toFixed(1)} MiB, delta ${((memory.peak - memory.before) / MiB).toFixed(1)} MiB (${((memory.peak - memory.before) / size).toFixed(2)} × the file)`);
  }

  // The large files are processed before search is measured, so they do not share its CPU.
  await idle();

  // 3. Search over many documents, seeded by SQL (rows, text and tsvectors).
  console.log(`# search over ${searchDocuments} documents`);
  const seedStarted = performance.now();
  const vocabulary = ['invoice', 'receipt', 'contract', 'membership', 'meeting', 'budget', 'harbour', 'sailing', 'boat', 'regatta', 'tax', 'insurance', 'rent', 'salary', 'volunteer', 'event', 'ticket', 'catering', 'venue', 'sponsor', 'grant', 'audit', 'minutes', 'board', 'election', 'treasurer', 'statute', 'newsletter', 'donation', 'equipment'];
  await sql.query('begin');
  await sql.query(
    `create temporary table seed on commit drop as
     select gen_random_uuid() as id, g as n,
            (select string_agg(($2::text[])[1 + floor(random() * array_length($2::text[], 1))::int] || case when random() < 0.0005 then ' lighthouse' else '' end, ' ')
               from generate_series(1, 60 + (g % 3)) ) as text
       from generate_series(1, $1) g`,
    [searchDocuments, vocabulary],
  );
  await sql.query(
    `insert into membership.document (id, account_id, mode, key_id, filename, title, mime_type, extension, size_bytes, sha256, blob_id, tags, status, attempts, created_at, processed_at, search)
     select id, $1, 'live', 'bench', 'seed-' || n || '.txt', 'Seeded ' || n, 'text/plain', 'txt', length(text), md5(text) || md5(n::text), gen_random_uuid(), '{}', 'ready', 1,
            now() - (n || ' seconds')::interval, now(),
            setweight(to_tsvector('english', 'Seeded ' || n || ' seed-' || n || '.txt'), 'A') || setweight(to_tsvector('english', text), 'B')
       from seed`,
    [accountId],
  );
  await sql.query(`insert into membership.document_content (document_id, text, pages, key_fields) select id, text, jsonb_build_array(jsonb_build_object('page', 1, 'text', text, 'method', 'plain', 'confidence', null)), '[]' from seed`);
  await sql.query('commit');
  await sql.query('analyze membership.document');
  await sql.query('analyze membership.document_content');
  console.log(`seeded in ${ms(performance.now() - seedStarted)}`);
  for (const q of ['lighthouse', 'sailing regatta', 'invoice']) {
    const times: number[] = [];
    let hits = 0;
    for (let i = 0; i < Math.max(5, samples / 10); i++) await fetch(`${platform.baseUrl}/api/v1/documents?q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${secret}` } }).then((r) => r.text());
    for (let i = 0; i < samples; i++) {
      const t = performance.now();
      const response = await fetch(`${platform.baseUrl}/api/v1/documents?q=${encodeURIComponent(q)}&limit=20`, { headers: { authorization: `Bearer ${secret}` } });
      const page = (await response.json()) as { data: { snippet: string | null }[] };
      times.push(performance.now() - t);
      hits = page.data.length;
    }
    times.sort((a, b) => a - b);
    const { rows } = await sql.query<{ n: string }>(`select count(*) as n from membership.document where account_id = $1 and search @@ websearch_to_tsquery('english', $2)`, [accountId, q]);
    console.log(`q=${JSON.stringify(q)} (${rows[0].n} matching): GET /documents p50 ${ms(percentile(times, 50))}, p99 ${ms(percentile(times, 99))}, ${hits} items with snippets per page`);
  }
} finally {
  await secondWorker.stop().catch(() => undefined);
  await secondOrm.close();
  await sql.end();
  await identityOrm.close();
  await platform.stop();
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
