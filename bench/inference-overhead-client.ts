/**
 * bench/inference-overhead-client: the bench's load generator, run in a worker thread so that its
 * own cost does not sit on the platform's event loop. For each job it opens an undici Pool of
 * `concurrency` keep-alive connections, runs `warmup` requests, then `count` requests with
 * `concurrency` in flight at all times (as many as start within `maxSeconds`), each timed from
 * the call to the last byte of the body, and posts the latencies back (milliseconds, a Float64Array).
 */
import { parentPort } from 'node:worker_threads';
import { Pool } from 'undici';

export interface ClientJob {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Streamed answers must end with `data: [DONE]`; whole ones must be a chat.completion. */
  stream: boolean;
  concurrency: number;
  warmup: number;
  count: number;
  /** No request starts after this long; the result then holds fewer than `count` latencies. */
  maxSeconds: number;
}

export interface ClientResult {
  latencies: Float64Array;
  wallMs: number;
  failures: number;
  firstFailure?: string;
}

const DONE = 'data: [DONE]\n\n';

async function once(pool: Pool, job: ClientJob): Promise<string | null> {
  const { statusCode, body } = await pool.request({ method: 'POST', path: job.path, headers: job.headers, body: job.body });
  if (job.stream) {
    // Only the tail matters: the stream must end with [DONE].
    let tail = '';
    for await (const chunk of body) tail = (tail + (chunk as Buffer).toString('utf8')).slice(-64);
    if (statusCode !== 200) return `status ${statusCode}: ${tail}`;
    return tail.endsWith(DONE) && !tail.includes('"error"') ? null : `stream did not end with [DONE]: …${tail}`;
  }
  const text = await body.text();
  if (statusCode !== 200) return `status ${statusCode}: ${text.slice(0, 300)}`;
  return text.includes('"chat.completion"') ? null : `not a chat.completion: ${text.slice(0, 300)}`;
}

async function run(job: ClientJob): Promise<ClientResult> {
  const pool = new Pool(job.origin, { connections: job.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  let failures = 0;
  let firstFailure: string | undefined;
  const note = (failure: string | null) => {
    if (failure === null) return;
    failures++;
    firstFailure ??= failure;
  };
  try {
    // Warm-up: opens the connections and lets the JIT settle; not counted.
    let warm = 0;
    await Promise.all(
      Array.from({ length: job.concurrency }, async () => {
        while (warm++ < job.warmup) note(await once(pool, job).catch((error: Error) => error.message));
      }),
    );
    failures = 0;
    firstFailure = undefined;
    const latencies = new Float64Array(job.count);
    let next = 0;
    const started = performance.now();
    const deadline = started + job.maxSeconds * 1000;
    await Promise.all(
      Array.from({ length: job.concurrency }, async () => {
        for (;;) {
          if (performance.now() > deadline) return;
          const index = next++;
          if (index >= job.count) return;
          const at = performance.now();
          note(await once(pool, job).catch((error: Error) => error.message));
          latencies[index] = performance.now() - at;
        }
      }),
    );
    const done = Math.min(next, job.count);
    return { latencies: done === job.count ? latencies : latencies.slice(0, done), wallMs: performance.now() - started, failures, firstFailure };
  } finally {
    await pool.close();
  }
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (message: ClientJob | 'close') => {
    if (message === 'close') return void port.close();
    run(message).then(
      (result) => port.postMessage({ result }, [result.latencies.buffer as ArrayBuffer]),
      (error: Error) => port.postMessage({ error: error.stack ?? error.message }),
    );
  });
}
