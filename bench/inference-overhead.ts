/**
 * bench/inference-overhead: what the inference interfaces add to a chat completion, and what the
 * embedded llama.cpp engine generates on this machine.
 *
 * 1. A loopback OpenAI-compatible upstream (vLLM's wire format, answering at once) is called
 *    directly and through the platform's edge: the keyless gateway
 *    (/inference/gateway/v1/chat/completions, provider_c) and Service T (/inference/text, a text
 *    key). POST /v1/chat/completions whole and streamed (stream_options.include_usage), timed to
 *    the last byte, at 1, 10 and 100 requests in flight; p50/p99 and what the platform adds.
 *    The upstream and the client each run in a worker thread of their own, off the platform's
 *    event loop (the platform's edge and subgraphs share the main thread, as in production).
 * 1b. One request at a time through the gateway, quiet and then beside a second process burning a
 *    core, side by side: chat completions and the Responses API (POST /v1/responses, translated to
 *    a chat completion upstream, so its direct figure is the upstream's chat completion), whole and
 *    streamed, with the added p50 and, for streams, the time to the first byte of the body against
 *    the upstream's own. Targets: added p50 under 1 ms, first byte within 1 ms of the upstream's.
 * 2. The embedded llama.cpp engine over a random-weight GGUF: completion tokens per second with
 *    one sequence at a time and with six at once.
 *
 * Run on demand: `npm run bench:inference-overhead`. BENCH_REQUESTS scales the request counts
 * (default 1), BENCH_MAX_SECONDS caps each measured run (default 12: on a slow or busy machine a run
 * stops early and the table shows the requests it made), BENCH_UPSTREAM_CONNECTIONS sets the engine's connections to the upstream (default:
 * the engine's own, 16), BENCH_SKIP_LEVELS=1 leaves the table of part 1 out (1b stays),
 * BENCH_SKIP_LLAMA=1 leaves part 2 out.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { loadConfig } from '../platform/config.js';
import { openPlatformDatabase } from '../platform/database.js';
import { openIdentityStore } from '../identity/index.js';
import { IdentityService } from '../identity/identity.service.js';
import { createLogger } from '../core/logger.js';
import { startPlatform } from '../platform/platform.js';
import { inferenceConfigFrom } from '../subgraphs/inference/config/load-inference-config.js';
import type { GenerationRequest, Usage } from '../subgraphs/inference/engine/text-engine.js';
import { writeRandomGguf } from '../subgraphs/inference/engines/llama/gguf-writer.js';
import { LlamaEngine } from '../subgraphs/inference/engines/llama/llama-engine.js';
import type { ClientJob, ClientResult } from './inference-overhead-client.js';

const MODEL = 'bench-model';
const scale = Number(process.env.BENCH_REQUESTS ?? 1);
const maxSeconds = Number(process.env.BENCH_MAX_SECONDS ?? 12);
const upstreamConnections = process.env.BENCH_UPSTREAM_CONNECTIONS ? Number(process.env.BENCH_UPSTREAM_CONNECTIONS) : undefined;
const LEVELS = [
  { concurrency: 1, count: Math.round(1500 * scale), warmup: 200 },
  { concurrency: 10, count: Math.round(2000 * scale), warmup: 300 },
  { concurrency: 100, count: Math.round(4000 * scale), warmup: 500 },
];
const SERVICE_T_LEVELS = new Set([1, 10]);

// ---------------------------------------------------------------------------------------------
// Worker threads: the upstream and the client.

interface Upstream {
  url: string;
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const worker = new Worker(new URL('./inference-overhead-upstream.ts', import.meta.url), { workerData: { model: MODEL } });
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('message', (message: { url: string }) => resolve(message.url));
    worker.once('error', reject);
  });
  return {
    url,
    close: async () => {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage('close');
      await exited;
    },
  };
}

interface Client {
  run(job: ClientJob): Promise<ClientResult>;
  close(): Promise<void>;
}

function startClient(): Client {
  const worker = new Worker(new URL('./inference-overhead-client.ts', import.meta.url));
  return {
    // One job at a time: the next message is this job's answer.
    run: (job) =>
      new Promise<ClientResult>((resolve, reject) => {
        const onError = (error: Error) => reject(error);
        worker.once('error', onError);
        worker.once('message', (message: { result?: ClientResult; error?: string }) => {
          worker.off('error', onError);
          if (message.result) resolve(message.result);
          else reject(new Error(`the client failed: ${message.error}`));
        });
        worker.postMessage(job);
      }),
    close: async () => {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage('close');
      await exited;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Figures.

/**
 * CPU time of the main thread (the platform's edge and subgraphs; the client and the upstream run
 * in workers), in ms, from Linux's per-thread accounting; undefined elsewhere. Unlike latency it
 * hardly moves when other processes compete for the cores.
 */
function mainThreadCpuMs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}

interface Row {
  mode: 'whole' | 'stream';
  target: 'direct' | 'gateway' | 'Service T';
  concurrency: number;
  count: number;
  p50: number;
  p99: number;
  mean: number;
  rps: number;
  /** The platform's main-thread CPU per request, warm-up included. */
  cpuPerRequest?: number;
  failures: number;
  firstFailure?: string;
}

interface SingleRow {
  load: 'quiet' | 'loaded';
  mode: 'whole' | 'stream';
  target: 'direct' | 'gateway' | 'gateway responses' | 'responses unkept';
  count: number;
  p50: number;
  /** Streams: p50 of the time to the first byte of the body. */
  ttfb50?: number;
}

/** A second process spinning on one core, the "busy machine" of the loaded run. */
function startBurner(): { stop(): void } {
  const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  return { stop: () => void child.kill('SIGKILL') };
}

const ms = (value: number) => value.toFixed(3).padStart(9);
const signedMs = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(3)}`.padStart(9);

// ---------------------------------------------------------------------------------------------
// Part 1: the interfaces' overhead.

async function interfaceOverhead(): Promise<{ rows: Row[]; single: SingleRow[] }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-inference-'));
  const upstream = await startUpstream();
  const engine = { type: 'openai-upstream', url: upstream.url, flavour: 'vllm', ...(upstreamConnections ? { connections: upstreamConnections } : {}) };
  const config = {
    ...loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT ?? '5497' }),
    port: 0,
    host: '127.0.0.1',
    subgraphPorts: { membership: 0, marketplace: 0, inference: 0, traceroute: 0 },
    // The limiter stays on (it is part of the edge's cost) but never refuses the bench.
    rateLimits: { livePerMinute: 1e12, testPerMinute: 1e12, inferencePerMinute: 1e12, anonymousPerMinute: 1e12 },
    // Every provider on the loopback upstream: Service T routes to provider_a, the bench names provider_c on the gateway.
    inference: inferenceConfigFrom({ providers: ['provider_a', 'provider_b', 'provider_c', 'provider_d'].map((id) => ({ id, name: id, engines: [engine] })) }, null),
  };
  const client = startClient();
  let database: Awaited<ReturnType<typeof openPlatformDatabase>> | undefined;
  let platform: Awaited<ReturnType<typeof startPlatform>> | undefined;
  let identityOrm: Awaited<ReturnType<typeof openIdentityStore>> | undefined;
  try {
    database = await openPlatformDatabase({ databaseUrl: config.databaseUrl, dataDir, embeddedPort: config.embeddedDatabasePort });
    platform = await startPlatform(config, database.url, createLogger('silent'));
    identityOrm = await openIdentityStore(database.url);
    const { secret: textKey } = await new IdentityService(identityOrm.em.fork()).createKey({ account: 'bench', kind: 'text' });

    const messages = [{ role: 'user', content: 'Say hello to the bench.' }];
    const bodyOf = (stream: boolean, provider?: string) =>
      JSON.stringify({ model: MODEL, messages, max_tokens: 16, ...(provider ? { provider } : {}), ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) });
    const platformOrigin = new URL(platform.baseUrl).origin;
    const responsesBody = (stream: boolean, store = true) =>
      JSON.stringify({ model: MODEL, input: messages[0]!.content, max_output_tokens: 16, ...(store ? {} : { store: false }), ...(stream ? { stream: true } : {}) });
    const targets = {
      direct: (stream: boolean) => ({ origin: upstream.url, path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: bodyOf(stream) }),
      gateway: (stream: boolean) => ({
        origin: platformOrigin,
        path: '/inference/gateway/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: bodyOf(stream, 'provider_c'),
      }),
      'Service T': (stream: boolean) => ({
        origin: platformOrigin,
        path: '/inference/text/v1/chat/completions',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${textKey}` },
        body: bodyOf(stream),
      }),
      'gateway responses': (stream: boolean) => ({
        origin: platformOrigin,
        path: '/inference/gateway/v1/responses',
        headers: { 'content-type': 'application/json' },
        body: responsesBody(stream),
        kind: 'responses' as const,
      }),
      // store: false, the translation alone: the default keeps each response (one durable insert) before answering.
      'responses unkept': (stream: boolean) => ({
        origin: platformOrigin,
        path: '/inference/gateway/v1/responses',
        headers: { 'content-type': 'application/json' },
        body: responsesBody(stream, false),
        kind: 'responses' as const,
      }),
    };

    // A first call on each path: the engine lists the upstream's models, the key is looked up.
    for (const stream of [false, true]) {
      for (const target of ['gateway', 'Service T', 'gateway responses'] as const) {
        const job = { ...targets[target](stream), stream, concurrency: 1, warmup: 0, count: 1, maxSeconds: 60 };
        const probe = await client.run(job);
        if (probe.failures) throw new Error(`${target} does not answer: ${probe.firstFailure}`);
      }
    }

    const rows: Row[] = [];
    for (const mode of process.env.BENCH_SKIP_LEVELS === '1' ? [] : (['whole', 'stream'] as const)) {
      const stream = mode === 'stream';
      for (const level of LEVELS) {
        const names = (['direct', 'gateway', 'Service T'] as const).filter((name) => name !== 'Service T' || SERVICE_T_LEVELS.has(level.concurrency));
        for (const target of names) {
          const cpuBefore = mainThreadCpuMs();
          const result = await client.run({ ...targets[target](stream), stream, ...level, maxSeconds });
          const cpuAfter = mainThreadCpuMs();
          const sorted = result.latencies.slice().sort();
          const row: Row = {
            mode,
            target,
            concurrency: level.concurrency,
            count: result.latencies.length,
            p50: percentile(sorted, 0.5),
            p99: percentile(sorted, 0.99),
            mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
            rps: (result.latencies.length / result.wallMs) * 1000,
            ...(target !== 'direct' && cpuBefore !== undefined && cpuAfter !== undefined ? { cpuPerRequest: (cpuAfter - cpuBefore) / (level.warmup + result.latencies.length) } : {}),
            failures: result.failures,
            ...(result.firstFailure ? { firstFailure: result.firstFailure } : {}),
          };
          rows.push(row);
          process.stderr.write(`  ${mode.padEnd(6)} ${target.padEnd(9)} c=${String(level.concurrency).padEnd(3)} p50 ${row.p50.toFixed(3)} ms, p99 ${row.p99.toFixed(3)} ms\n`);
        }
      }
    }
    const single: SingleRow[] = [];
    for (const load of ['quiet', 'loaded'] as const) {
      const burner = load === 'loaded' ? startBurner() : undefined;
      try {
        for (const mode of ['whole', 'stream'] as const) {
          const stream = mode === 'stream';
          for (const target of ['direct', 'gateway', 'gateway responses', 'responses unkept'] as const) {
            const result = await client.run({ ...targets[target](stream), stream, concurrency: 1, count: Math.round(1000 * scale), warmup: 200, maxSeconds });
            if (result.failures) throw new Error(`${target} ${mode} (${load}) failed ${result.failures} times, first: ${result.firstFailure}`);
            const sorted = result.latencies.slice().sort();
            const firstBytes = result.firstBytes.slice().sort();
            single.push({ load, mode, target, count: sorted.length, p50: percentile(sorted, 0.5), ttfb50: stream ? percentile(firstBytes, 0.5) : undefined });
            process.stderr.write(`  c=1 ${load.padEnd(6)} ${mode.padEnd(6)} ${target.padEnd(17)} p50 ${percentile(sorted, 0.5).toFixed(3)} ms\n`);
          }
        }
      } finally {
        burner?.stop();
      }
    }
    return { rows, single };
  } finally {
    await client.close();
    await identityOrm?.close();
    await platform?.stop();
    await database?.stop();
    await upstream.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function printSingle(single: SingleRow[]): void {
  if (single.length === 0) return;
  console.log(`\none request at a time through the gateway (${os.availableParallelism()} cores), p50 ms; "loaded": a second process burning a core throughout`);
  console.log('responses: POST /v1/responses, translated to a chat completion upstream, so "added" is against the upstream\'s chat completion;');
  console.log('  kept (the default, store: true: one durable insert before the answer), and unkept (store: false)');
  console.log('first byte: the call to the first byte of a stream\'s body, p50; "late" is the gateway\'s minus the upstream\'s\n');
  console.log('mode    target             requests  quiet p50  added  loaded p50  added   quiet 1st byte  late  loaded 1st byte  late');
  const find = (load: SingleRow['load'], mode: SingleRow['mode'], target: SingleRow['target']) => single.find((r) => r.load === load && r.mode === mode && r.target === target);
  let worstAdded = -Infinity;
  let worstKept = -Infinity;
  let worstLate = -Infinity;
  for (const mode of ['whole', 'stream'] as const) {
    for (const target of ['direct', 'gateway', 'gateway responses', 'responses unkept'] as const) {
      const cells: string[] = [];
      const bytes: string[] = [];
      let count = 0;
      for (const load of ['quiet', 'loaded'] as const) {
        const row = find(load, mode, target);
        const direct = find(load, mode, 'direct');
        if (!row || !direct) {
          cells.push(''.padStart(11) + ''.padStart(8));
          continue;
        }
        count = row.count;
        const added = row.p50 - direct.p50;
        if (target === 'gateway responses') worstKept = Math.max(worstKept, added);
        else if (target !== 'direct') worstAdded = Math.max(worstAdded, added);
        cells.push(`${row.p50.toFixed(3).padStart(11)}${(target === 'direct' ? '' : signedMs(added).trim()).padStart(8)}`);
        if (mode === 'stream' && row.ttfb50 !== undefined && direct.ttfb50 !== undefined) {
          const late = row.ttfb50 - direct.ttfb50;
          if (target !== 'direct') worstLate = Math.max(worstLate, late);
          bytes.push(`${row.ttfb50.toFixed(3).padStart(load === 'quiet' ? 16 : 17)}${(target === 'direct' ? '' : signedMs(late).trim()).padStart(8)}`);
        }
      }
      console.log(`${mode.padEnd(8)}${target.padEnd(18)}${String(count).padStart(9)}${cells.join('')}${bytes.join('')}`);
    }
  }
  const load = os.loadavg()[0];
  console.log(`\nload average ${load.toFixed(1)} on ${os.availableParallelism()} cores at the end${load > os.availableParallelism() ? ': other processes competed for the CPU in the quiet run too' : ''}`);
  console.log(`target: added p50 under 1 ms at one request at a time (chat, unkept responses): ${worstAdded.toFixed(3)} ms at worst -> ${worstAdded < 1 ? 'met' : 'NOT met'}`);
  console.log(`kept responses (store: true, the default) add ${worstKept.toFixed(3)} ms at worst: the same plus one durable insert (its WAL flush) before the answer`);
  console.log(`target: a stream's first byte within 1 ms of the upstream's: ${worstLate.toFixed(3)} ms later at worst -> ${worstLate < 1 ? 'met' : 'NOT met'}`);
}

function printOverhead(rows: Row[]): void {
  if (rows.length === 0) return;
  console.log(`\ninference-overhead: POST /v1/chat/completions, loopback upstream (vLLM wire format, answers at once), node ${process.version}, ${os.availableParallelism()} cores`);
  console.log('latency to the last byte, ms; "added" is the platform\'s figure minus the direct one at the same concurrency and mode\n');
  console.log('"platform CPU" is the main thread\'s (edge and inference subgraph) CPU time per request, which contention for the cores hardly moves\n');
  console.log('mode    target     conc  requests   p50 ms   p99 ms  mean ms    req/s  added p50  added p99  platform CPU ms/req  failures');
  for (const row of rows) {
    const direct = rows.find((r) => r.mode === row.mode && r.concurrency === row.concurrency && r.target === 'direct')!;
    const added = row.target === 'direct' ? ''.padStart(20) : `${signedMs(row.p50 - direct.p50)}  ${signedMs(row.p99 - direct.p99)}`;
    console.log(
      `${row.mode.padEnd(8)}${row.target.padEnd(11)}${String(row.concurrency).padStart(4)}${String(row.count).padStart(10)}${ms(row.p50)}${ms(row.p99)}${ms(row.mean)}${row.rps.toFixed(0).padStart(9)}  ${added}${(row.cpuPerRequest === undefined ? '' : row.cpuPerRequest.toFixed(2)).padStart(21)}${String(row.failures).padStart(10)}`,
    );
  }
  const gatewayC1 = rows.filter((r) => r.target === 'gateway' && r.concurrency === 1);
  const worst = Math.max(...gatewayC1.map((r) => r.p50 - rows.find((d) => d.mode === r.mode && d.concurrency === 1 && d.target === 'direct')!.p50));
  const load = os.loadavg()[0];
  if (load > os.availableParallelism()) console.log(`\nnote: load average ${load.toFixed(1)} on ${os.availableParallelism()} cores: other processes competed for the CPU, latencies are inflated`);
  console.log(`\ntarget: p50 added under 1 ms at concurrency 1 (LiteLLM publishes 3.25 ms): gateway adds ${worst.toFixed(3)} ms at worst -> ${worst < 1 ? 'met' : 'NOT met'}`);
  const failed = rows.filter((r) => r.failures > 0);
  for (const row of failed) console.log(`failures: ${row.mode} ${row.target} c=${row.concurrency}: ${row.failures}, first: ${row.firstFailure}`);
  if (failed.length) throw new Error('requests failed: the figures would not compare like with like');
}

// ---------------------------------------------------------------------------------------------
// Part 2: the embedded llama.cpp engine's tokens per second.

interface LlamaFigures {
  threads: number;
  rounds: { label: string; sequences: number; tokens: number; wallMs: number; perSequence: number[] }[];
}

async function llamaThroughput(): Promise<LlamaFigures> {
  const modelsDir = await mkdtemp(path.join(os.tmpdir(), 'bench-llama-'));
  await writeRandomGguf(path.join(modelsDir, 'bench.gguf'), { seed: 7 });
  const engine = new LlamaEngine({ modelsDir, sequences: 6, contextSize: 1024 });
  const threads = Math.max(1, os.availableParallelism() - 1);
  try {
    const models = await engine.settled();
    if (models[0]?.status !== 'ready') throw new Error(`the bench model did not load: ${JSON.stringify(models)}`);
    const generate = async (prompt: string): Promise<{ usage: Usage; ms: number }> => {
      const request: GenerationRequest = {
        model: 'bench',
        input: { kind: 'completion', prompt },
        sampling: { maxTokens: 64, seed: 1, temperature: 0 },
        signal: AbortSignal.timeout(120_000),
      };
      const at = performance.now();
      for await (const event of engine.generate(request)) if (event.type === 'done') return { usage: event.usage, ms: performance.now() - at };
      throw new Error('the generation ended without a done event');
    };
    const prompt = (i: number) => `Once upon a time, in bench run number ${i}, there was`;
    // Warm-up: the first generation pays for the sequences' first allocations.
    await Promise.all(Array.from({ length: 6 }, (_, i) => generate(prompt(i))));

    const rounds: LlamaFigures['rounds'] = [];
    const ROUNDS = 3;
    for (let round = 0; round < ROUNDS; round++) {
      const started = performance.now();
      const one: { usage: Usage; ms: number }[] = [];
      for (let i = 0; i < 6; i++) one.push(await generate(prompt(i)));
      rounds.push({
        label: '1 at a time',
        sequences: 1,
        tokens: one.reduce((sum, g) => sum + g.usage.completionTokens, 0),
        wallMs: performance.now() - started,
        perSequence: one.map((g) => (g.usage.completionTokens / g.ms) * 1000),
      });
      const parallelStart = performance.now();
      const six = await Promise.all(Array.from({ length: 6 }, (_, i) => generate(prompt(i))));
      rounds.push({
        label: '6 at once',
        sequences: 6,
        tokens: six.reduce((sum, g) => sum + g.usage.completionTokens, 0),
        wallMs: performance.now() - parallelStart,
        perSequence: six.map((g) => (g.usage.completionTokens / g.ms) * 1000),
      });
    }
    return { threads, rounds };
  } finally {
    await engine.close();
    await rm(modelsDir, { recursive: true, force: true });
  }
}

function printLlama(figures: LlamaFigures): void {
  console.log(
    `\nllama.cpp engine: random-weight GGUF (llama, 2 layers, 64 wide), sequences 6, context 1024, ${figures.threads} thread(s); 6 completions of max 64 tokens (temperature 0, seed 1) per row`,
  );
  console.log('run            seqs  tokens   wall ms  aggregate tok/s  per-sequence tok/s (mean, min-max)');
  for (const round of figures.rounds) {
    const mean = round.perSequence.reduce((sum, value) => sum + value, 0) / round.perSequence.length;
    console.log(
      `${round.label.padEnd(15)}${String(round.sequences).padStart(4)}${String(round.tokens).padStart(8)}${round.wallMs.toFixed(0).padStart(10)}${((round.tokens / round.wallMs) * 1000).toFixed(0).padStart(17)}  ${mean.toFixed(0).padStart(8)} (${Math.min(...round.perSequence).toFixed(0)}-${Math.max(...round.perSequence).toFixed(0)})`,
    );
  }
  const best = (sequences: number) => Math.max(...figures.rounds.filter((r) => r.sequences === sequences).map((r) => (r.tokens / r.wallMs) * 1000));
  console.log(`\nbest aggregate: 1 sequence ${best(1).toFixed(0)} tok/s, 6 sequences ${best(6).toFixed(0)} tok/s (×${(best(6) / best(1)).toFixed(2)})\n`);
}

// ---------------------------------------------------------------------------------------------

const { rows, single } = await interfaceOverhead();
printOverhead(rows);
printSingle(single);
if (process.env.BENCH_SKIP_LLAMA !== '1') printLlama(await llamaThroughput());
