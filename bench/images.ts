/**
 * bench/images: what the image paths add, in time and in memory.
 *
 * 1. Latency. A loopback Stable-Diffusion-WebUI (bench/images-webui, in a worker thread, answering
 *    every txt2img at once with one small fixed PNG) is called directly (POST /sdapi/v1/txt2img)
 *    and through the platform's edge: the keyless proxy (/inference/proxy/api/txt2img, provider_d)
 *    and the gateway (/inference/gateway/v1/images/generations, provider provider_d), at 1 and 6
 *    requests in flight (6 is the proxy's limit per client address); p50/p99 to the last byte and
 *    what the platform adds. The client (bench/images-client) runs in a worker thread too.
 * 2. Memory. Six img2img requests at once through the proxy, each carrying four random-noise
 *    2048x2048 PNGs as base64 init_images, against an upstream answering each with four such
 *    images. The upstream and the client run in child processes here, so that the platform
 *    process's RSS is the platform's alone. The upstream holds the six generations until it has
 *    read all six bodies: the platform's memory is read then (requests in flight, waiting for the
 *    upstream; after a full GC, what it keeps alive per request), then the six answers are let go
 *    and the process's peak RSS (Linux's VmHWM, reset before the run) and sampled peak heap are read.
 *
 * Run on demand: `npm run bench:images`. BENCH_MAX_SECONDS caps each latency run (default 10),
 * BENCH_REQUESTS scales the request counts (default 1), BENCH_SKIP_LATENCY=1 and BENCH_SKIP_MEMORY=1 leave part 1 or 2 out,
 * EMBEDDED_PG_PORT the embedded PostgreSQL's port (default 5496).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Worker } from 'node:worker_threads';
import sharp from 'sharp';
import { loadConfig, type PlatformConfig } from '../platform/config.js';
import { openPlatformDatabase } from '../platform/database.js';
import { createLogger } from '../core/logger.js';
import { startPlatform } from '../platform/platform.js';
import { inferenceConfigFrom } from '../subgraphs/inference/config/load-inference-config.js';
import type { ClientJob, LatencyJob, LatencyResult, ParallelResult } from './images-client.js';

const scale = Number(process.env.BENCH_REQUESTS ?? 1);
const maxSeconds = Number(process.env.BENCH_MAX_SECONDS ?? 10);
const LEVELS = [
  { concurrency: 1, count: Math.round(800 * scale), warmup: 100 },
  { concurrency: 6, count: Math.round(2000 * scale), warmup: 200 },
];
const PARALLEL = 6;
const IMAGES = 4;
const SIDE = 2048;
const MiB = 1024 * 1024;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

// ---------------------------------------------------------------------------------------------
// The helpers: in worker threads (latency) or child processes (memory), one channel either way.

interface Helper {
  next<T>(): Promise<T>;
  send(message: unknown): void;
  close(): Promise<void>;
}

function helper(file: string, where: 'worker' | 'process'): Helper {
  const url = new URL(file, import.meta.url);
  const inbox: unknown[] = [];
  const waiting: ((message: unknown) => void)[] = [];
  const deliver = (message: unknown) => {
    const take = waiting.shift();
    if (take) take(message);
    else inbox.push(message);
  };
  let failed: Error | undefined;
  const fail = (error: Error) => {
    failed = error;
    for (const take of waiting.splice(0)) take({ error: error.message });
  };
  let send: (message: unknown) => void;
  let exited: Promise<unknown>;
  if (where === 'worker') {
    const worker = new Worker(url);
    worker.on('message', deliver);
    worker.on('error', fail);
    exited = new Promise((resolve) => worker.once('exit', resolve));
    send = (message) => worker.postMessage(message);
  } else {
    const child: ChildProcess = fork(fileURLToPath(url), [], { execArgv: ['--import', 'tsx'], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', deliver);
    child.on('error', fail);
    exited = new Promise((resolve) => child.once('exit', resolve));
    void exited.then(() => fail(new Error(`${file} exited`)));
    send = (message) => child.send(message as never);
  }
  return {
    next: <T>() =>
      new Promise<T>((resolve) => {
        if (inbox.length) return resolve(inbox.shift() as T);
        if (failed) return resolve({ error: failed.message } as T);
        waiting.push(resolve as (message: unknown) => void);
      }),
    send,
    close: async () => {
      send('close');
      await exited;
    },
  };
}

async function startUpstream(where: 'worker' | 'process'): Promise<Helper & { url: string }> {
  const upstream = helper('./images-webui.ts', where);
  const started = await upstream.next<{ url?: string; error?: string }>();
  if (!started.url) throw new Error(`the loopback WebUI did not start: ${started.error}`);
  const url = started.url;
  return { ...upstream, url };
}

async function run<T>(client: Helper, job: ClientJob): Promise<T> {
  client.send(job);
  const message = await client.next<{ result?: T; error?: string }>();
  if (message.error !== undefined || message.result === undefined) throw new Error(`the client failed: ${message.error}`);
  return message.result;
}

// ---------------------------------------------------------------------------------------------
// The platform: in this process, as in production (edge and subgraphs on the main thread).

function platformConfig(dataDir: string, upstreamUrl: string): PlatformConfig {
  return {
    ...loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT ?? '5496' }),
    port: 0,
    host: '127.0.0.1',
    subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
    // The limiter stays on (it is part of the edge's cost) but never refuses the bench.
    rateLimits: { livePerMinute: 1e12, testPerMinute: 1e12, inferencePerMinute: 1e12, anonymousPerMinute: 1e12 },
    inference: inferenceConfigFrom(
      {
        providers: [
          { id: 'provider_a', name: 'Provider A', engines: [{ type: 'ocr' }] },
          { id: 'provider_b', name: 'Provider B', engines: [{ type: 'ocr' }] },
          { id: 'provider_c', name: 'Provider C', engines: [{ type: 'ocr' }] },
          { id: 'provider_d', name: 'Provider D', engines: [{ type: 'sd-webui', url: upstreamUrl }] },
        ],
      },
      null,
    ),
  };
}

// ---------------------------------------------------------------------------------------------
// Figures.

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

interface Row {
  target: 'direct' | 'proxy' | 'gateway';
  concurrency: number;
  count: number;
  p50: number;
  p99: number;
  rps: number;
  failures: number;
  firstFailure?: string;
}

const ms = (value: number) => value.toFixed(3).padStart(9);
const signedMs = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(3)}`.padStart(10);
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

// ---------------------------------------------------------------------------------------------
// Part 1: latency.

async function latency(dataDir: string, databaseUrl: string): Promise<Row[]> {
  const upstream = await startUpstream('worker');
  const client = helper('./images-client.ts', 'worker');
  let platform: Awaited<ReturnType<typeof startPlatform>> | undefined;
  try {
    platform = await startPlatform(platformConfig(dataDir, upstream.url), databaseUrl, createLogger('silent'));
    const origin = new URL(platform.baseUrl).origin;
    const json = { 'content-type': 'application/json' };
    const webuiBody = JSON.stringify({ prompt: 'a bench image', width: 64, height: 64, steps: 20, sampler_name: 'Euler a', seed: 1 });
    const targets: Record<Row['target'], Omit<LatencyJob, 'kind' | 'concurrency' | 'warmup' | 'count' | 'maxSeconds'>> = {
      direct: { origin: upstream.url, path: '/sdapi/v1/txt2img', headers: json, body: webuiBody, expect: '"images"' },
      proxy: { origin, path: '/inference/proxy/api/txt2img', headers: json, body: webuiBody, expect: '"images"' },
      gateway: {
        origin,
        path: '/inference/gateway/v1/images/generations',
        headers: json,
        body: JSON.stringify({ prompt: 'a bench image', size: '64x64', provider: 'provider_d', seed: 1 }),
        expect: '"b64_json"',
      },
    };
    for (const target of ['proxy', 'gateway'] as const) {
      const probe = await run<LatencyResult>(client, { kind: 'latency', ...targets[target], concurrency: 1, warmup: 0, count: 1, maxSeconds: 60 });
      if (probe.failures) throw new Error(`${target} does not answer: ${probe.firstFailure}`);
    }
    // Warm both paths before anything is measured: without it, whichever runs first after the
    // probes pays for the JIT (about 1.5 ms of p50 at concurrency 1 on a 2-core machine).
    for (const target of ['proxy', 'gateway'] as const) {
      await run<LatencyResult>(client, { kind: 'latency', ...targets[target], concurrency: 6, warmup: 0, count: 1000, maxSeconds });
    }
    const rows: Row[] = [];
    for (const level of LEVELS) {
      for (const target of ['direct', 'proxy', 'gateway'] as const) {
        const result = await run<LatencyResult>(client, { kind: 'latency', ...targets[target], ...level, maxSeconds });
        const sorted = result.latencies.slice().sort();
        const row: Row = {
          target,
          concurrency: level.concurrency,
          count: sorted.length,
          p50: percentile(sorted, 0.5),
          p99: percentile(sorted, 0.99),
          rps: (sorted.length / result.wallMs) * 1000,
          failures: result.failures,
          ...(result.firstFailure ? { firstFailure: result.firstFailure } : {}),
        };
        rows.push(row);
        process.stderr.write(`  ${target.padEnd(8)} c=${level.concurrency} p50 ${row.p50.toFixed(3)} ms, p99 ${row.p99.toFixed(3)} ms${row.failures ? `, ${row.failures} failed` : ''}\n`);
      }
    }
    return rows;
  } finally {
    await client.close();
    await platform?.stop();
    await upstream.close();
  }
}

function printLatency(rows: Row[]): void {
  console.log(`\nimages: latency of a txt2img answered at once by a loopback WebUI (one 64x64 PNG), node ${process.version}, ${os.availableParallelism()} cores`);
  console.log('to the last byte, ms; "added" is the platform\'s figure minus the direct one at the same concurrency\n');
  console.log('target    conc  requests   p50 ms   p99 ms    req/s   added p50   added p99  failures');
  for (const row of rows) {
    const direct = rows.find((r) => r.target === 'direct' && r.concurrency === row.concurrency)!;
    const added = row.target === 'direct' ? ''.padStart(22) : `${signedMs(row.p50 - direct.p50)}  ${signedMs(row.p99 - direct.p99)}`;
    console.log(`${row.target.padEnd(8)}${String(row.concurrency).padStart(6)}${String(row.count).padStart(10)}${ms(row.p50)}${ms(row.p99)}${row.rps.toFixed(0).padStart(9)}  ${added}${String(row.failures).padStart(10)}`);
  }
  const load = os.loadavg()[0]!;
  if (load > os.availableParallelism()) console.log(`\nnote: load average ${load.toFixed(1)} on ${os.availableParallelism()} cores: other processes competed for the CPU, latencies are inflated`);
  for (const row of rows.filter((r) => r.failures > 0)) console.log(`failures: ${row.target} c=${row.concurrency}: ${row.failures}, first: ${row.firstFailure}`);
}

// ---------------------------------------------------------------------------------------------
// Part 2: memory.

interface Memory {
  rss: number;
  heapUsed: number;
  /** Buffers and other memory outside the V8 heap that V8 knows of. */
  external: number;
}

const memoryNow = (): Memory => {
  const usage = process.memoryUsage();
  return { rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external };
};

/** The process's peak RSS since the last reset (Linux's VmHWM), or undefined elsewhere. */
function peakRss(): number | undefined {
  try {
    const line = readFileSync('/proc/self/status', 'utf8').match(/^VmHWM:\s+(\d+) kB$/m);
    return line ? Number(line[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

interface MemoryFigures {
  requestBytes: number;
  answerBytes: number;
  imageBase64Bytes: number;
  upstreamReceived: number;
  baseline: Memory;
  held: Memory;
  heldLive: Memory;
  peakHeap: number;
  peakHeapPlusExternal: number;
  peakRssSampled: number;
  peakRss?: number;
  after: Memory;
  answers: ParallelResult['answers'];
  /** From sending the six to the upstream holding all six, and to the last answer read. */
  heldAfter: number;
  seconds: number;
}

async function memory(dataDir: string, databaseUrl: string): Promise<MemoryFigures> {
  const upstream = await startUpstream('process');
  const client = helper('./images-client.ts', 'process');
  let platform: Awaited<ReturnType<typeof startPlatform>> | undefined;
  try {
    platform = await startPlatform(platformConfig(dataDir, upstream.url), databaseUrl, createLogger('silent'));
    const origin = new URL(platform.baseUrl).origin;
    // Warm the img2img path with small images first: code compiled, connections open.
    const small = (await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png().toBuffer()).toString('base64');
    const warm = await run<LatencyResult>(client, {
      kind: 'latency',
      origin,
      path: '/inference/proxy/api/img2img',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'warm', init_images: [small], width: 64, height: 64 }),
      expect: '"images"',
      concurrency: PARALLEL,
      warmup: 0,
      count: 60,
      maxSeconds: 60,
    });
    if (warm.failures) throw new Error(`img2img through the proxy does not answer: ${warm.firstFailure}`);

    upstream.send({ big: true });
    client.send({ kind: 'prepare', images: IMAGES, side: SIDE } satisfies ClientJob);
    const [{ ready: answerBytes }, prepared] = await Promise.all([upstream.next<{ ready: number }>(), client.next<{ result?: { prepared: number }; error?: string }>()]);
    if (!prepared.result) throw new Error(`the client could not prepare: ${prepared.error}`);
    const requestBytes = prepared.result.prepared;

    gc();
    gc();
    const baseline = memoryNow();
    const canReset = resetPeakRss();
    let peakHeap = baseline.heapUsed;
    let peakHeapPlusExternal = baseline.heapUsed + baseline.external;
    let peakRssSampled = baseline.rss;
    const sample = () => {
      const now = memoryNow();
      peakHeap = Math.max(peakHeap, now.heapUsed);
      peakHeapPlusExternal = Math.max(peakHeapPlusExternal, now.heapUsed + now.external);
      peakRssSampled = Math.max(peakRssSampled, now.rss);
    };
    const sampler = setInterval(sample, 5);

    const started = performance.now();
    upstream.send({ hold: PARALLEL });
    client.send({ kind: 'parallel', origin, path: '/inference/proxy/api/img2img', parallel: PARALLEL } satisfies ClientJob);
    const held = await upstream.next<{ held?: number; bytes?: number }>();
    if (held.held !== PARALLEL) throw new Error(`the upstream did not get the six requests: ${JSON.stringify(held)}`);
    const heldAfter = (performance.now() - started) / 1000;
    sample();
    const heldNow = memoryNow();
    gc();
    gc();
    const heldLive = memoryNow();
    upstream.send('release');
    const message = await client.next<{ result?: ParallelResult; error?: string }>();
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    sample();
    if (!message.result) throw new Error(`the client failed: ${message.error}`);
    const rss = canReset ? peakRss() : undefined;
    gc();
    gc();
    const after = memoryNow();
    return {
      requestBytes,
      answerBytes,
      imageBase64Bytes: requestBytes / IMAGES,
      upstreamReceived: held.bytes ?? 0,
      baseline,
      held: heldNow,
      heldLive,
      peakHeap,
      peakHeapPlusExternal,
      peakRssSampled,
      ...(rss !== undefined ? { peakRss: rss } : {}),
      after,
      answers: message.result.answers,
      heldAfter,
      seconds,
    };
  } finally {
    await client.close();
    await platform?.stop();
    await upstream.close();
  }
}

function printMemory(m: MemoryFigures): void {
  const perRequest = (bytes: number) => bytes / PARALLEL;
  const copies = (bytes: number, of: number) => (perRequest(bytes) / of).toFixed(2);
  console.log(`\nimages: memory of ${PARALLEL} img2img requests at once through the proxy, each with ${IMAGES} random-noise ${SIDE}x${SIDE} PNGs, each answered with ${IMAGES} such images`);
  console.log(`request body ${mib(m.requestBytes)} (${mib(m.imageBase64Bytes)} of base64 per image), answer ${mib(m.answerBytes)}; the upstream received ${mib(m.upstreamReceived / PARALLEL)} per request`);
  const statuses = m.answers.map((a) => a.status);
  console.log(`answers: ${statuses.join(', ')}; ${m.answers.map((a) => mib(a.bytes)).join(', ')}; the six bodies were all upstream after ${m.heldAfter.toFixed(1)} s, the six answers read after ${m.seconds.toFixed(1)} s (the GCs of the measurement included)${m.answers.some((a) => a.failure) ? `; first failure: ${m.answers.find((a) => a.failure)?.failure}` : ''}`);
  console.log('\nthe platform process (this one; the upstream and the client are child processes), above its idle baseline after a full GC:');
  console.log(`                                                         total       per request   in request bodies`);
  const line = (label: string, bytes: number, of: number) => console.log(`${label.padEnd(55)}${mib(bytes).padStart(11)}${mib(perRequest(bytes)).padStart(14)}${copies(bytes, of).padStart(14)}`);
  line('held upstream, V8 heap (live and garbage)', m.held.heapUsed - m.baseline.heapUsed, m.requestBytes);
  line('held upstream, V8 heap after a full GC (live)', m.heldLive.heapUsed - m.baseline.heapUsed, m.requestBytes);
  line('held upstream, external (Buffers) after a full GC', m.heldLive.external - m.baseline.external, m.requestBytes);
  line('held upstream, RSS', m.held.rss - m.baseline.rss, m.requestBytes);
  console.log(`${''.padEnd(55)}${''.padStart(11)}${''.padStart(14)}   in req+answer`);
  const both = m.requestBytes + m.answerBytes;
  line('peak V8 heap (sampled every 5 ms on the main thread)', m.peakHeap - m.baseline.heapUsed, both);
  line('peak V8 heap + external (sampled)', m.peakHeapPlusExternal - m.baseline.heapUsed - m.baseline.external, both);
  if (m.peakRss !== undefined) line('peak RSS (VmHWM, exact)', m.peakRss - m.baseline.rss, both);
  else line('peak RSS (sampled; no VmHWM here)', m.peakRssSampled - m.baseline.rss, both);
  console.log(`\nbaseline: RSS ${mib(m.baseline.rss)}, heap ${mib(m.baseline.heapUsed)}, external ${mib(m.baseline.external)}; after the run and a full GC: RSS ${mib(m.after.rss)}, heap ${mib(m.after.heapUsed)}, external ${mib(m.after.external)}`);
  console.log(`V8 heap limit ${mib(v8.getHeapStatistics().heap_size_limit)}`);
  console.log(`
What the copies are, by the code (the figures are measured; the attribution is read from the code):
- held upstream: body-parser reads the body into a Buffer, decodes it to one string and JSON.parses it; V8 makes
  the parsed image strings slices of that string, so the whole decoded body stays alive with req.body (1 copy,
  heap, the "after a full GC" line). The sd-webui engine sends the request to undici piece by piece (each image
  serialised on its own as it goes), so what it adds is garbage of one image at a time, not another whole body.
- the answer streams through: stream-json tokenizes the upstream's chunks and each image's base64 is written to the
  client in pieces under the socket's backpressure (at most the first 1 MiB of an answer is held); no answer-sized
  copy is made.
- "held" is read while the six wait upstream (all bodies sent, no answer yet), "after a full GC" is what is still
  referenced then; the peaks cover the answers too. RSS also keeps what the allocator has not returned to the
  system, which is why it stays above the baseline after the run.`);
}

// ---------------------------------------------------------------------------------------------

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-images-'));
const config = platformConfig(dataDir, 'http://127.0.0.1:9');
const database = await openPlatformDatabase({ databaseUrl: config.databaseUrl, dataDir, embeddedPort: config.embeddedDatabasePort });
let failed = false;
try {
  if (process.env.BENCH_SKIP_LATENCY !== '1') printLatency(await latency(dataDir, database.url));
  if (process.env.BENCH_SKIP_MEMORY !== '1') printMemory(await memory(dataDir, database.url));
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  await database.stop();
  await rm(dataDir, { recursive: true, force: true });
}
if (failed) process.exitCode = 1;
