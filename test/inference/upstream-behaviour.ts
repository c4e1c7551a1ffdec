import http from 'node:http';
import type { LoopbackBehaviour, LoopbackOpenAiServer } from '../support/loopback-openai-server.js';

/**
 * Applies `patch` (a failure, loading, a dropped connection) to the loopback's generation
 * requests only, leaving its model listing and health answering. The upstream engine re-reads a
 * listing every 10 s and a model whose listing fails is not served at all, so a failure that hit
 * the listing too would make a test's outcome depend on when the listing was last read.
 * The loopback reads these fields synchronously right after recording the request.
 */
export function onGenerationOnly(server: LoopbackOpenAiServer, patch: Partial<LoopbackBehaviour>): void {
  const base = server.behaviour;
  server.behaviour = new Proxy(base, {
    get(target, key: string) {
      const last = server.requests.at(-1);
      const generating = last?.method === 'POST' && /\/v1\/(chat\/)?completions$/.test(last.path);
      if (generating && key in patch) return patch[key as keyof LoopbackBehaviour];
      return target[key as keyof LoopbackBehaviour];
    },
  });
}

/** The last generation request the loopback received. */
export function lastGeneration(server: LoopbackOpenAiServer) {
  const request = server.requests.findLast((r) => r.method === 'POST' && /\/v1\/(chat\/)?completions$/.test(r.path));
  if (!request) throw new Error(`no generation request reached the ${server.flavour} loopback`);
  return request as typeof request & { body: Record<string, unknown> };
}

/**
 * A minimal vLLM-shaped server on a given port that only lists one model and answers /health:
 * started to let the engine read its listing, then closed, so that the next generation meets a
 * refused connection (an upstream that went away after it was listed).
 */
export async function listingOnlyServer(port: number, model: string): Promise<{ close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/v1/models') {
      const body = JSON.stringify({ object: 'list', data: [{ id: model, object: 'model', created: 1, owned_by: 'vllm', root: model, parent: null, max_model_len: 4096, permission: [] }] });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      return void res.end(body);
    }
    res.writeHead(req.url === '/health' ? 200 : 404, { 'content-length': 0 });
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The data payloads of a text/event-stream body, in order ('[DONE]' included). */
export function sseData(text: string): string[] {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      if (!block.startsWith('data: ')) throw new Error(`not a data event: ${JSON.stringify(block)}`);
      return block.slice('data: '.length);
    });
}
