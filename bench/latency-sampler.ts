/**
 * Latency at one connection in microseconds, where autocannon reports whole milliseconds (a p50
 * of 0.9 ms and one of 1.4 ms both print as 1). A worker thread sends one request at a time,
 * taking turns between the targets request by request, so a machine that changes speed mid-run
 * slows them all alike; each request is timed with performance.now() from before it is sent to
 * its last body byte. The client runs beside the servers as autocannon does (a worker thread of
 * the bench's process), not on their event loop.
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import { percentile } from './percentile.js';

export interface SampledTarget {
  name: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

export interface Sampled {
  name: string;
  p50: number;
  p99: number;
  mean: number;
}

/** `n` timed requests per target (after a tenth as many untimed), one at a time, in turns. */
export function sampleLatencies(targets: SampledTarget[], n: number, members?: Members): Promise<Sampled[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { targets, n, members } });
    worker.once('message', (result: Sampled[] | { error: string }) => ('error' in result ? reject(new Error(result.error)) : resolve(result)));
    worker.once('error', reject);
  });
}

/** Each request names a member of `pool` at random where its URL or body says `placeholder`. */
export interface Members {
  placeholder: string;
  pool: string[];
}

async function sample(targets: SampledTarget[], n: number, members?: Members): Promise<Sampled[]> {
  const pools = new Map<string, Pool>();
  const poolFor = (origin: string) => pools.get(origin) ?? pools.set(origin, new Pool(origin, { connections: 1 })).get(origin)!;
  const named = (text: string) => (members ? text.replaceAll(members.placeholder, members.pool[Math.floor(Math.random() * members.pool.length)]) : text);
  const send = async (target: SampledTarget) => {
    const url = new URL(named(target.url));
    const response = await poolFor(url.origin).request({ path: url.pathname + url.search, method: target.method, headers: target.headers, body: target.body === undefined ? undefined : named(target.body) });
    const text = await response.body.text();
    if (response.statusCode !== 200 || text.includes('"errors"')) throw new Error(`${target.name} answered ${response.statusCode}: ${text.slice(0, 200)}`);
  };
  for (let i = 0; i < Math.ceil(n / 10); i++) for (const target of targets) await send(target);
  const times = targets.map((): number[] => []);
  for (let i = 0; i < n; i++) {
    for (const [index, target] of targets.entries()) {
      const start = performance.now();
      await send(target);
      times[index].push((performance.now() - start) * 1000);
    }
  }
  await Promise.all([...pools.values()].map((pool) => pool.close()));
  return targets.map((target, index) => {
    const sorted = times[index].sort((a, b) => a - b);
    return { name: target.name, p50: percentile(sorted, 50), p99: percentile(sorted, 99), mean: sorted.reduce((sum, t) => sum + t, 0) / sorted.length };
  });
}

if (!isMainThread && workerData?.targets) {
  const { targets, n, members } = workerData as { targets: SampledTarget[]; n: number; members?: Members };
  sample(targets, n, members).then(
    (result) => parentPort!.postMessage(result),
    (error: Error) => parentPort!.postMessage({ error: error.message }),
  );
}
