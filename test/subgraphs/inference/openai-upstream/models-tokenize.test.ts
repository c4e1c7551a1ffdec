import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EngineError } from '../../../../subgraphs/inference/engine/text-engine.js';
import { OpenAiUpstreamEngine } from '../../../../subgraphs/inference/engines/openai-upstream/openai-upstream-engine.js';
import { LoopbackOpenAiServer } from '../../../support/loopback-openai-server.js';
import { collect, failure } from './collect.js';

// Listings in shapes the loopback's two flavours do not produce, served as they are.
async function serveJson(body: unknown) {
  const server = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
}

const messages = [{ role: 'user' as const, content: 'Count these few words, please.' }];

describe('models and health', () => {
  let vllm: LoopbackOpenAiServer;
  let llama: LoopbackOpenAiServer;

  beforeAll(async () => {
    [vllm, llama] = await Promise.all([
      LoopbackOpenAiServer.start('vllm', [
        { id: 'Qwen/Qwen2.5-7B-Instruct', contextLength: 32768 },
        { id: 'meta-llama/Llama-3.1-8B-Instruct', contextLength: 8192 },
      ]),
      LoopbackOpenAiServer.start('llama.cpp', [{ id: 'gemma-3-4b-it-Q4_K_M.gguf', contextLength: 131072, vision: true }]),
    ]);
  });
  afterAll(async () => {
    await Promise.all([vllm.close(), llama.close()]);
  });
  beforeEach(() => {
    vllm.reset();
    llama.reset();
  });

  it("lists vLLM's models with max_model_len as the context length, text only", async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'vllm' });
    expect(await engine.models()).toEqual([
      { id: 'Qwen/Qwen2.5-7B-Instruct', contextLength: 32768, inputModalities: ['text'], urlImageInput: true, status: 'ready', embeddings: true },
      { id: 'meta-llama/Llama-3.1-8B-Instruct', contextLength: 8192, inputModalities: ['text'], urlImageInput: true, status: 'ready', embeddings: true },
    ]);
    await engine.close();
  });

  it('takes the operator\'s word for image input where vLLM\'s listing does not say', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'vllm', imageModels: ['Qwen/Qwen2.5-7B-Instruct'] });
    expect((await engine.models()).map((model) => model.inputModalities)).toEqual([['text', 'image'], ['text']]);
    await engine.close();
  });

  it("lists llama.cpp's model with meta.n_ctx_train and the input modalities it declares", async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: llama.url, flavour: 'llama.cpp' });
    expect(await engine.models()).toEqual([
      { id: 'gemma-3-4b-it-Q4_K_M.gguf', contextLength: 131072, inputModalities: ['text', 'image'], urlImageInput: true, status: 'ready', embeddings: false },
    ]);
    await engine.close();
  });

  it("Ollama's listing says nothing of context length or modalities: 0 and text", async () => {
    const ollama = await serveJson({ object: 'list', data: [{ id: 'llama3.2:latest', object: 'model', created: 1_700_000_000, owned_by: 'library' }] });
    const engine = new OpenAiUpstreamEngine({ baseUrl: ollama.url, flavour: 'ollama' });
    expect(await engine.models()).toEqual([{ id: 'llama3.2:latest', contextLength: 0, inputModalities: ['text'], urlImageInput: true, status: 'ready', embeddings: false }]);
    await engine.close();
    await ollama.close();
  });

  it('caches the listing briefly, then asks again', async () => {
    // A second: the cached calls must all fall inside it even when a loaded host stalls this process.
    const engine = new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'vllm', modelCacheMs: 1_000 });
    await engine.models();
    await engine.models();
    await Promise.all([engine.models(), engine.models()]);
    expect(vllm.requests.filter((request) => request.path === '/v1/models')).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    await engine.models();
    expect(vllm.requests.filter((request) => request.path === '/v1/models')).toHaveLength(2);
    await engine.close();
  });

  it('does not cache a failed listing', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'vllm', modelCacheMs: 60_000 });
    vllm.behaviour.fail = { status: 500, message: 'boom' };
    expect(await failure(engine.models())).toMatchObject({ reason: 'upstream_error' });
    vllm.behaviour.fail = undefined;
    expect(await engine.models()).toHaveLength(2);
    await engine.close();
  });

  it('the models filter lists only the chosen ids and refuses the others without calling the upstream', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'vllm', models: ['meta-llama/Llama-3.1-8B-Instruct'] });
    expect((await engine.models()).map((model) => model.id)).toEqual(['meta-llama/Llama-3.1-8B-Instruct']);
    const sent = vllm.requests.length;
    const error = await failure(collect(engine, { model: 'Qwen/Qwen2.5-7B-Instruct', input: { kind: 'chat', messages }, sampling: {} }));
    expect(error).toMatchObject({ reason: 'model_not_found', param: 'model' });
    expect(vllm.requests.length).toBe(sent);
    await engine.close();
  });

  it('marks a llama.cpp model whose meta is still null as loading, and a router model that failed as failed', async () => {
    // A lone llama-server while loading, and the router's per-model states.
    const raw = await serveJson({
      object: 'list',
      data: [
        { id: 'loading.gguf', object: 'model', meta: null },
        { id: 'broken.gguf', object: 'model', status: { value: 'unloaded', failed: true, exit_code: 1 } },
        { id: 'coming.gguf', object: 'model', status: { value: 'loading' } },
        { id: 'up.gguf', object: 'model', status: { value: 'loaded' }, meta: { n_ctx_train: 2048 } },
      ],
    });
    const engine = new OpenAiUpstreamEngine({ baseUrl: raw.url, flavour: 'llama.cpp' });
    expect((await engine.models()).map(({ id, status, contextLength }) => ({ id, status, contextLength }))).toEqual([
      { id: 'loading.gguf', status: 'loading', contextLength: 0 },
      { id: 'broken.gguf', status: 'failed', contextLength: 0 },
      { id: 'coming.gguf', status: 'loading', contextLength: 0 },
      { id: 'up.gguf', status: 'ready', contextLength: 2048 },
    ]);
    await engine.close();
    await raw.close();
  });

  it('health probes /health on vLLM and llama.cpp and /v1/models elsewhere', async () => {
    for (const [server, flavour, path] of [
      [vllm, 'vllm', '/health'],
      [llama, 'llama.cpp', '/health'],
      [vllm, 'openai', '/v1/models'],
      [llama, 'ollama', '/v1/models'],
    ] as const) {
      const engine = new OpenAiUpstreamEngine({ baseUrl: server.url, flavour });
      expect(await engine.health()).toEqual({ ok: true });
      expect(server.requests.at(-1)!.path).toBe(path);
      server.behaviour.fail = { status: 500, message: 'down' };
      expect(await engine.health()).toEqual({ ok: false, detail: 'The upstream engine failed' });
      server.behaviour.fail = undefined;
      await engine.close();
    }
  });

  it('accepts a base URL ending in /v1 and with a path prefix', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: `${vllm.url}/v1/`, flavour: 'vllm' });
    expect(await engine.models()).toHaveLength(2);
    expect(vllm.requests.at(-1)!.path).toBe('/v1/models');
    await engine.close();
  });
});

describe('tokenize', () => {
  let vllm: LoopbackOpenAiServer;
  let llama: LoopbackOpenAiServer;

  beforeAll(async () => {
    [vllm, llama] = await Promise.all([LoopbackOpenAiServer.start('vllm', [{ id: 'loop-model', contextLength: 8192 }]), LoopbackOpenAiServer.start('llama.cpp', [{ id: 'loop-model', contextLength: 2048 }])]);
  });
  afterAll(async () => {
    await Promise.all([vllm.close(), llama.close()]);
  });
  beforeEach(() => {
    vllm.reset();
    llama.reset();
  });

  it("vLLM: POST /tokenize with the prompt or the messages, answered with vLLM's count and max_model_len", async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'vllm' });
    const prompt = await engine.tokenize('loop-model', { kind: 'completion', prompt: 'Two words' });
    expect(vllm.requests.at(-1)!).toMatchObject({ path: '/tokenize', body: { model: 'loop-model', prompt: 'Two words' } });
    expect(prompt.count).toBe(3);
    expect(prompt.tokens).toHaveLength(3);
    expect(prompt.maxModelLen).toBe(8192);
    const chat = await engine.tokenize('loop-model', { kind: 'chat', messages });
    expect(vllm.requests.at(-1)!.body).toEqual({ model: 'loop-model', messages });
    expect(chat.count).toBe(chat.tokens.length);
    expect(chat.count).toBeGreaterThan(prompt.count);
    expect(await failure(engine.tokenize('other', { kind: 'completion', prompt: 'x' }))).toMatchObject({ reason: 'model_not_found' });
    await engine.close();
  });

  it("llama.cpp: chat goes through the server's /apply-template, then /tokenize {content}; the context is n_ctx_train", async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: llama.url, flavour: 'llama.cpp' });
    const result = await engine.tokenize('loop-model', { kind: 'chat', messages });
    const [template, tokenize] = llama.requests.slice(-2);
    expect(template).toMatchObject({ path: '/apply-template', body: { messages } });
    expect(tokenize.path).toBe('/tokenize');
    expect((tokenize.body as { content: string }).content).toContain('Count these few words, please.');
    expect(tokenize.body).toMatchObject({ add_special: true });
    expect(result.maxModelLen).toBe(2048);
    expect(result.count).toBe(result.tokens.length);
    // The same prompt generated counts the same: tokenize agrees with generation's usage.
    const generated = await collect(engine, { model: 'loop-model', input: { kind: 'chat', messages }, sampling: {} });
    expect(generated.usage.promptTokens).toBe(result.count);
    await engine.close();
  });

  it('llama.cpp: images in chat are refused for token counts', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: llama.url, flavour: 'llama.cpp' });
    const error = await failure(
      engine.tokenize('loop-model', { kind: 'chat', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] }),
    );
    expect(error).toMatchObject({ reason: 'invalid_request', param: 'messages' });
    await engine.close();
  });

  it.each(['ollama', 'openai'] as const)('%s has no tokenize endpoint: refused, never estimated, nothing sent', async (flavour) => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour });
    const error = await failure(engine.tokenize('loop-model', { kind: 'completion', prompt: 'x' }));
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ reason: 'unsupported_parameter' });
    expect((error as Error).message).toContain(`not available on this upstream (${flavour})`);
    expect(vllm.requests).toHaveLength(0);
    await engine.close();
  });
});
