/**
 * bench/inference-overhead-client: the bench's load generator, run in a worker thread so that its
 * own cost does not sit on the platform's event loop. For each job it opens an undici Pool of
 * `concurrency` keep-alive connections, runs `warmup` requests, then `count` requests with
 * `concurrency` in flight at all times (as many as start within `maxSeconds`), each timed from
 * the call to the last byte of the body, and posts the latencies back (milliseconds, a Float64Array);
 * for streams also the time from the call to the first byte of the body.
 */
import { parentPort } from 'node:worker_threads';
import { Pool } from 'undici';

export interface ClientJob {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /**
   * Chat: streamed answers must end with `data: [DONE]`, whole ones be a chat.completion.
   * Responses: streamed answers must end with the response.completed event, whole ones be a response.
   */
  stream: boolean;
  kind?: 'chat' | 'responses';
  concurrency: number;
  warmup: number;
  count: number;
  /** No request starts after this long; the result then holds fewer than `count` latencies. */
  maxSeconds: number;
}

export interface ClientResult {
  latencies: Float64Array;
  /** Streams: the call to the first byte of the body, per request (empty for whole answers). */
  firstBytes: Float64Array;
  wallMs: number;
  failures: number;
  firstFailure?: string;
}

const DONE = 'data: [DONE]\n\n';

interface Outcome {
  failure: string | null;
  /** When the first byte of the body arrived (performance.now()), for streams. */
  firstByteAt?: number;
}

async function once(pool: Pool, job: ClientJob): Promise<Outcome> {
  const { statusCode, body } = await pool.request({ method: 'POST', path: job.path, headers: job.headers, body: job.body });
  const responses = job.kind === 'responses';
  if (job.stream) {
    // Only the tail matters: the stream must end with [DONE] (chat) or response.completed (responses).
    let tail = '';
    let firstByteAt: number | undefined;
    let completed = false;
    for await (const chunk of body) {
      firstByteAt ??= performance.now();
      const seen = tail + (chunk as Buffer).toString('utf8');
      if (responses && seen.includes('event: response.completed')) completed = true;
      tail = seen.slice(-64);
    }
    if (statusCode !== 200) return { failure: `status ${statusCode}: ${tail}` };
    const ended = responses ? completed : tail.endsWith(DONE) && !tail.includes('"error"');
    return { failure: ended ? null : `stream did not end as it should: …${tail}`, firstByteAt };
  }
  const text = await body.text();
  if (statusCode !== 200) return { failure: `status ${statusCode}: ${text.slice(0, 300)}` };
  const expected = responses ? '"object":"response"' : '"chat.completion"';
  return { failure: text.includes(expected) ? null : `not a ${responses ? 'response' : 'chat.completion'}: ${text.slice(0, 300)}` };
}

async function run(job: ClientJob): Promise<ClientResult> {
  const pool = new Pool(job.origin, { connections: job.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  let failures = 0;
  let firstFailure: string | undefined;
  const note = ({ failure }: Outcome) => {
    if (failure === null) return;
    failures++;
    firstFailure ??= failure;
  };
  try {
    // Warm-up: opens the connections and lets the JIT settle; not counted.
    let warm = 0;
    await Promise.all(
      Array.from({ length: job.concurrency }, async () => {
        while (warm++ < job.warmup) note(await once(pool, job).catch((error: Error) => ({ failure: error.message })));
      }),
    );
    failures = 0;
    firstFailure = undefined;
    const latencies = new Float64Array(job.count);
    const firstBytes = new Float64Array(job.stream ? job.count : 0);
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
          const outcome = await once(pool, job).catch((error: Error): Outcome => ({ failure: error.message }));
          note(outcome);
          latencies[index] = performance.now() - at;
          if (job.stream) firstBytes[index] = (outcome.firstByteAt ?? performance.now()) - at;
        }
      }),
    );
    const done = Math.min(next, job.count);
    const cut = (values: Float64Array) => (done === job.count || values.length === 0 ? values : values.slice(0, done));
    return { latencies: cut(latencies), firstBytes: cut(firstBytes), wallMs: performance.now() - started, failures, firstFailure };
  } finally {
    await pool.close();
  }
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (message: ClientJob | 'close') => {
    if (message === 'close') return void port.close();
    run(message).then(
      (result) => port.postMessage({ result }, [result.latencies.buffer as ArrayBuffer, result.firstBytes.buffer as ArrayBuffer]),
      (error: Error) => port.postMessage({ error: error.stack ?? error.message }),
    );
  });
}
