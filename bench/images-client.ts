/**
 * bench/images-client: the images bench's load generator, in a worker thread (latency: off the
 * platform's event loop) or a child process (memory: its buffers out of the platform process's RSS).
 *
 * Jobs:
 * - `latency`: like bench/inference-overhead-client, over an undici Pool of `concurrency`
 *   keep-alive connections, `warmup` requests then `count` with `concurrency` in flight at all
 *   times (as many as start within `maxSeconds`), each timed from the call to the body's last byte;
 *   an answer counts as a failure unless it is 200 and holds `expect`.
 * - `prepare`: builds the img2img body of the memory part once: `images` random-noise PNGs of
 *   `side` x `side` as init_images; answers `{ prepared: bytes }`.
 * - `parallel`: sends that body `parallel` times at once, reads each answer as it streams in
 *   (counting bytes, keeping none), and answers each one's status, bytes and time.
 */
import { randomBytes } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import sharp from 'sharp';
import { Pool } from 'undici';

// The channel to the parent and the noise PNGs are the same in bench/images-webui and bench/images-client
// (a worker thread cannot import a sibling .ts file by its .js name, so each has its own copy).
interface ParentChannel {
  on(listener: (message: unknown) => void): void;
  post(message: unknown, transfer?: ArrayBuffer[]): void;
  close(): void;
}

/** The parent of a worker thread, or of a child process forked with an IPC channel; none otherwise. */
function parentChannel(): ParentChannel | undefined {
  if (parentPort) {
    const port = parentPort;
    return { on: (listener) => port.on('message', listener), post: (message, transfer) => port.postMessage(message, transfer), close: () => port.close() };
  }
  if (process.send) {
    return {
      on: (listener) => process.on('message', listener),
      post: (message) => process.send!(message),
      close: () => process.disconnect(),
    };
  }
  return undefined;
}

/** A PNG of random noise as base64: PNG cannot compress it (2048x2048 is about 12 MiB, 16 MiB as base64). */
async function noisePng(width: number, height: number): Promise<string> {
  const png = await sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  return png.toString('base64');
}


export interface LatencyJob {
  kind: 'latency';
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** A substring every good answer holds. */
  expect: string;
  concurrency: number;
  warmup: number;
  count: number;
  maxSeconds: number;
}

export interface LatencyResult {
  latencies: Float64Array;
  wallMs: number;
  failures: number;
  firstFailure?: string;
}

export interface PrepareJob {
  kind: 'prepare';
  images: number;
  side: number;
}

export interface ParallelJob {
  kind: 'parallel';
  origin: string;
  path: string;
  parallel: number;
}

export interface ParallelResult {
  answers: { status: number; bytes: number; ms: number; failure?: string }[];
}

export type ClientJob = LatencyJob | PrepareJob | ParallelJob;

async function once(pool: Pool, job: LatencyJob): Promise<string | null> {
  const { statusCode, body } = await pool.request({ method: 'POST', path: job.path, headers: job.headers, body: job.body });
  const text = await body.text();
  if (statusCode !== 200) return `status ${statusCode}: ${text.slice(0, 300)}`;
  return text.includes(job.expect) ? null : `no ${job.expect} in the answer: ${text.slice(0, 300)}`;
}

async function latency(job: LatencyJob): Promise<LatencyResult> {
  const pool = new Pool(job.origin, { connections: job.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  let failures = 0;
  let firstFailure: string | undefined;
  const note = (failure: string | null) => {
    if (failure === null) return;
    failures++;
    firstFailure ??= failure;
  };
  try {
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

let prepared: Buffer | undefined;

async function prepare(job: PrepareJob): Promise<number> {
  const images = await Promise.all(Array.from({ length: job.images }, () => noisePng(job.side, job.side)));
  prepared = Buffer.from(JSON.stringify({ prompt: 'bench: memory of big images', init_images: images, width: job.side, height: job.side, steps: 20, denoising_strength: 0.5 }));
  return prepared.length;
}

async function parallel(job: ParallelJob): Promise<ParallelResult> {
  if (!prepared) throw new Error('prepare first');
  const body = prepared;
  const pool = new Pool(job.origin, { connections: job.parallel, pipelining: 1 });
  try {
    const answers = await Promise.all(
      Array.from({ length: job.parallel }, async () => {
        const at = performance.now();
        try {
          const response = await pool.request({ method: 'POST', path: job.path, headers: { 'content-type': 'application/json', 'content-length': String(body.length) }, body });
          let bytes = 0;
          let head = '';
          for await (const chunk of response.body) {
            if (head.length < 300) head += (chunk as Buffer).subarray(0, 300).toString('utf8');
            bytes += (chunk as Buffer).length;
          }
          return { status: response.statusCode, bytes, ms: performance.now() - at, ...(response.statusCode !== 200 ? { failure: head.slice(0, 300) } : {}) };
        } catch (error) {
          return { status: 0, bytes: 0, ms: performance.now() - at, failure: (error as Error).message };
        }
      }),
    );
    return { answers };
  } finally {
    await pool.close();
  }
}

const channel = parentChannel();
if (channel) {
  channel.on((message) => {
    if (message === 'close') return void channel.close();
    const job = message as ClientJob;
    const run = async () => {
      switch (job.kind) {
        case 'latency': {
          const result = await latency(job);
          return channel.post({ result }, [result.latencies.buffer as ArrayBuffer]);
        }
        case 'prepare':
          return channel.post({ result: { prepared: await prepare(job) } });
        case 'parallel':
          return channel.post({ result: await parallel(job) });
      }
    };
    run().catch((error: Error) => channel.post({ error: error.stack ?? error.message }));
  });
}
