/**
 * bench/inference-overhead-upstream: the bench's OpenAI-compatible upstream, run in a worker thread
 * of its own so that it does not share the platform's event loop. It answers every request at once
 * with a fixed tiny answer in vLLM's wire format: the model listing, /health, and
 * POST /v1/chat/completions as one chat.completion or, with stream: true, as server-sent events
 * (a role chunk, four content chunks, the finish chunk, the usage chunk when asked, [DONE]).
 * workerData: `{ model }`, the one model it lists. Posts `{ url }` to its parent once it listens; a `'close'` message stops it.
 */
import http from 'node:http';
import type net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

const BENCH_MODEL = (workerData as { model: string }).model;

const PIECES = ['Hello', ',', ' bench', ' world.'];
const PROMPT_TOKENS = 9;
const created = Math.floor(Date.now() / 1000);

const modelsBody = JSON.stringify({
  object: 'list',
  data: [{ id: BENCH_MODEL, object: 'model', created, owned_by: 'vllm', root: BENCH_MODEL, parent: null, max_model_len: 4096, permission: [] }],
});

let ids = 0;

function completion(): string {
  return JSON.stringify({
    id: `chatcmpl-bench-${++ids}`,
    object: 'chat.completion',
    created,
    model: BENCH_MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content: PIECES.join('') }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: PIECES.length, total_tokens: PROMPT_TOKENS + PIECES.length },
  });
}

function streamed(includeUsage: boolean): string[] {
  const id = `chatcmpl-bench-${++ids}`;
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: BENCH_MODEL, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '' }, null), ...PIECES.map((piece) => chunk({ content: piece }, null)), chunk({}, 'stop')];
  if (includeUsage) {
    const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: PIECES.length, total_tokens: PROMPT_TOKENS + PIECES.length };
    events.push(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: BENCH_MODEL, choices: [], usage })}\n\n`);
  }
  events.push('data: [DONE]\n\n');
  return events;
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') return void res.writeHead(200, { 'content-length': '0' }).end();
    if (req.method === 'GET' && path === '/v1/models') return void res.writeHead(200, { 'content-type': 'application/json' }).end(modelsBody);
    if (req.method !== 'POST' || path !== '/v1/chat/completions') return void res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}');
    let body: { stream?: boolean; stream_options?: { include_usage?: boolean } };
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"object":"error","message":"Invalid JSON body"}');
    }
    if (body.stream !== true) return void res.writeHead(200, { 'content-type': 'application/json' }).end(completion());
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    // One write per event, as a server generating token by token sends them, all in the same tick.
    for (const event of streamed(body.stream_options?.include_usage === true)) res.write(event);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
const sockets = new Set<net.Socket>();
server.on('connection', (socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});

if (parentPort) {
  const port = parentPort;
  server.listen(0, '127.0.0.1', () => {
    const { port: listening } = server.address() as net.AddressInfo;
    port.postMessage({ url: `http://127.0.0.1:${listening}` });
  });
  port.on('message', (message) => {
    if (message !== 'close') return;
    for (const socket of sockets) socket.destroy();
    server.close(() => port.close());
  });
}
