/**
 * bench/images-webui: the images bench's Stable-Diffusion-WebUI upstream, a minimal one. It runs in
 * a worker thread (the latency part: off the platform's event loop) or in a child process (the
 * memory part: so that its buffers are not in the platform process's RSS); it talks to its parent
 * the same way in both.
 *
 * It answers the listings (sd-models, samplers, upscalers, options), /internal/progress and
 * interrupt, and POST /sdapi/v1/txt2img and img2img at once with a fixed answer read from nothing
 * of the request (its body is read and counted, not parsed). The answer's images are either one
 * small fixed PNG, or, after a `{ big: true }` message, four random-noise 2048x2048 PNGs (noise, so
 * that PNG cannot compress them: about 12 MiB each, 16 MiB as base64).
 *
 * Messages from the parent: `{ big: true }` (answers `{ ready: bytesOfTheAnswer }` once the images
 * are made), `{ hold: n }` (answers no generation until n have been read whole, then posts
 * `{ held: n, bytes }` and waits for `'release'`), `'release'`, `'close'`. It posts
 * `{ url }` once it listens.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { parentPort } from 'node:worker_threads';
import sharp from 'sharp';

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


const SMALL_PNG = (await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 200, g: 40, b: 40 } } }).png().toBuffer()).toString('base64');
const INFO = JSON.stringify({ prompt: 'bench', seed: 1, all_seeds: [1], width: 64, height: 64, sampler_name: 'Euler a', steps: 20, sd_model_name: 'bench-checkpoint' });

const answerOf = (images: string[]) => Buffer.from(JSON.stringify({ images, parameters: {}, info: INFO }));
let answer = answerOf([SMALL_PNG]);

const LISTINGS: Record<string, string> = {
  '/sdapi/v1/sd-models': JSON.stringify([
    { title: 'bench-checkpoint.safetensors [0123456789]', model_name: 'bench-checkpoint', hash: '0123456789', sha256: null, filename: '/models/bench-checkpoint.safetensors', config: null },
  ]),
  '/sdapi/v1/samplers': JSON.stringify([{ name: 'Euler a', aliases: ['k_euler_a'], options: {} }]),
  '/sdapi/v1/upscalers': JSON.stringify([{ name: 'None', model_name: null, model_path: null, model_url: null, scale: 4 }]),
  '/sdapi/v1/options': JSON.stringify({ sd_model_checkpoint: 'bench-checkpoint.safetensors [0123456789]', samples_format: 'png' }),
};

let hold: { count: number; waiting: (() => void)[]; bytes: number } | undefined;

const send = (res: http.ServerResponse, status: number, body: string | Buffer) => {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

const port = parentChannel();

const server = http.createServer((req, res) => {
  let bytes = 0;
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'GET' && LISTINGS[path]) return send(res, 200, LISTINGS[path]);
    if (req.method === 'POST' && path === '/internal/progress') return send(res, 200, '{"active":false,"queued":false,"completed":true}');
    if (req.method === 'POST' && path === '/sdapi/v1/interrupt') return send(res, 200, '{}');
    if (req.method !== 'POST' || (path !== '/sdapi/v1/txt2img' && path !== '/sdapi/v1/img2img')) return send(res, 404, '{"detail":"Not Found"}');
    if (!hold) return send(res, 200, answer);
    const held = hold;
    held.bytes += bytes;
    held.waiting.push(() => send(res, 200, answer));
    if (held.waiting.length === held.count) port?.post({ held: held.count, bytes: held.bytes });
  });
});
server.keepAliveTimeout = 60_000;
const sockets = new Set<net.Socket>();
server.on('connection', (socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});

if (port) {
  server.listen(0, '127.0.0.1', () => {
    const { port: listening } = server.address() as net.AddressInfo;
    port.post({ url: `http://127.0.0.1:${listening}` });
  });
  port.on((message) => {
    if (message === 'close') {
      for (const socket of sockets) socket.destroy();
      server.close(() => port.close());
      return;
    }
    if (message === 'release') {
      const waiting = hold?.waiting ?? [];
      hold = undefined;
      for (const respond of waiting) respond();
      return;
    }
    const command = message as { big?: boolean; hold?: number };
    if (command.big) {
      void Promise.all(Array.from({ length: 4 }, () => noisePng(2048, 2048))).then((images) => {
        answer = answerOf(images);
        port.post({ ready: answer.length });
      });
    }
    if (command.hold) hold = { count: command.hold, waiting: [], bytes: 0 };
  });
}
