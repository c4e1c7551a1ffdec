import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EngineError, type GenerationRequest } from '../../../../subgraphs/inference/engine/text-engine.js';
import { OpenAiUpstreamEngine } from '../../../../subgraphs/inference/engines/openai-upstream/openai-upstream-engine.js';
import { freePort } from '../../../support/free-port.js';
import { LoopbackOpenAiServer } from '../../../support/loopback-openai-server.js';
import { collect, failure } from './collect.js';

// Words an upstream might say that must never reach a caller.
const LEAKY = 'weights at /srv/models/secret.gguf on 10.9.8.7 rejected prompt "my password"';

const chat: Omit<GenerationRequest, 'signal'> = { model: 'loop-model', input: { kind: 'chat', messages: [{ role: 'user', content: 'Hello there' }] }, sampling: {} };

function logSink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, logger: pino({ level: 'warn' }, stream) };
}

// An EngineError with this reason, whose message names neither the upstream's words nor its address.
function expectOurs(error: unknown, reason: string, server?: LoopbackOpenAiServer) {
  expect(error).toBeInstanceOf(EngineError);
  expect((error as EngineError).reason).toBe(reason);
  const message = (error as EngineError).message;
  expect(message).not.toContain('/srv/models');
  expect(message).not.toContain('10.9.8.7');
  expect(message).not.toContain('password');
  expect(message).not.toContain('127.0.0.1');
  if (server) expect(message).not.toContain(new URL(server.url).port);
  return error as EngineError;
}

describe('upstream failures become EngineErrors of our wording', () => {
  let vllm: LoopbackOpenAiServer;
  let llama: LoopbackOpenAiServer;
  let vllmEngine: OpenAiUpstreamEngine;
  let llamaEngine: OpenAiUpstreamEngine;
  const log = logSink();

  beforeAll(async () => {
    [vllm, llama] = await Promise.all([LoopbackOpenAiServer.start('vllm'), LoopbackOpenAiServer.start('llama.cpp')]);
    vllmEngine = new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'vllm', logger: log.logger, modelCacheMs: 0 });
    llamaEngine = new OpenAiUpstreamEngine({ baseUrl: llama.url, flavour: 'llama.cpp', logger: log.logger, modelCacheMs: 0 });
  });
  afterAll(async () => {
    await Promise.all([vllmEngine.close(), llamaEngine.close()]);
    await Promise.all([vllm.close(), llama.close()]);
  });
  beforeEach(() => {
    vllm.reset();
    llama.reset();
    log.lines.length = 0;
  });

  it('connection refused is unavailable, for generation, listing and token counts; health says not ok', async () => {
    const port = await freePort();
    const engine = new OpenAiUpstreamEngine({ baseUrl: `http://127.0.0.1:${port}`, flavour: 'vllm' });
    try {
      expectOurs(await failure(collect(engine, chat)), 'unavailable');
      expectOurs(await failure(engine.models()), 'unavailable');
      expectOurs(await failure(engine.tokenize('loop-model', { kind: 'completion', prompt: 'x' })), 'unavailable');
      const health = await engine.health();
      expect(health.ok).toBe(false);
      expect(health.detail).not.toContain(String(port));
    } finally {
      await engine.close();
    }
  });

  it('a connection reset before any answer is unavailable', async () => {
    vllm.behaviour.dropConnection = true;
    expectOurs(await failure(collect(vllmEngine, chat)), 'unavailable', vllm);
    expectOurs(await failure(vllmEngine.models()), 'unavailable', vllm);
  });

  it.each([
    [500, 'upstream_error'],
    [502, 'upstream_error'],
    [503, 'unavailable'],
    [504, 'timeout'],
    [429, 'unavailable'],
    [401, 'upstream_error'],
  ] as const)('HTTP %i from the upstream is %s, its message only logged', async (status, reason) => {
    vllm.behaviour.fail = { status, message: LEAKY, type: 'InternalServerError' };
    expectOurs(await failure(collect(vllmEngine, chat)), reason, vllm);
    expect(log.lines.join('')).toContain('/srv/models/secret.gguf');
  });

  it("llama.cpp's 503 Loading model is model_loading; its health probe says so and is not ok", async () => {
    llama.behaviour.loading = true;
    expectOurs(await failure(collect(llamaEngine, chat)), 'model_loading', llama);
    expectOurs(await failure(llamaEngine.models()), 'model_loading', llama);
    expect(await llamaEngine.health()).toEqual({ ok: false, detail: 'The model is still loading on the upstream engine' });
    llama.behaviour.loading = false;
    expect(await llamaEngine.health()).toEqual({ ok: true });
  });

  it.each(['nested', 'flat'] as const)("vLLM's 404 for an unknown model is model_not_found (%s error body)", async (style) => {
    vllm.behaviour.vllmErrorStyle = style;
    const error = expectOurs(await failure(collect(vllmEngine, { ...chat, model: 'no-such-model' })), 'model_not_found', vllm);
    expect(error.param).toBe('model');
    expect(error.message).toBe('No model "no-such-model" on the upstream engine');
  });

  it.each(['nested', 'flat'] as const)("vLLM's 400 naming a parameter is invalid_request with that param (%s error body)", async (style) => {
    vllm.behaviour.vllmErrorStyle = style;
    vllm.behaviour.fail = { status: 400, message: `temperature must be non-negative, ${LEAKY}`, type: 'BadRequestError', param: 'temperature' };
    const error = expectOurs(await failure(collect(vllmEngine, chat)), 'invalid_request', vllm);
    expect(error.param).toBe('temperature');
    vllm.behaviour.fail = { status: 422, message: LEAKY, type: 'UnprocessableEntityError' };
    const unnamed = expectOurs(await failure(collect(vllmEngine, chat)), 'invalid_request', vllm);
    expect(unnamed.param).toBeUndefined();
  });

  it("llama.cpp's 400 error body is invalid_request", async () => {
    llama.behaviour.fail = { status: 400, message: LEAKY };
    expectOurs(await failure(collect(llamaEngine, chat)), 'invalid_request', llama);
  });

  it('a prompt over the context length is invalid_request on max_tokens, from either server', async () => {
    for (const engine of [vllmEngine, llamaEngine]) {
      const error = expectOurs(await failure(collect(engine, { ...chat, sampling: { maxTokens: 100_000 } })), 'invalid_request');
      expect(error.param).toBe('max_tokens');
    }
  });

  it('an error event inside the stream ends the generation with an EngineError after the deltas already sent', async () => {
    for (const [server, engine, style] of [
      [vllm, vllmEngine, 'nested'],
      [vllm, vllmEngine, 'flat'],
      [llama, llamaEngine, 'nested'],
    ] as const) {
      server.reset();
      server.behaviour.vllmErrorStyle = style;
      server.behaviour.streamErrorAfter = { chunks: 2, code: 500, message: LEAKY, type: 'InternalServerError' };
      const deltas: string[] = [];
      const error = await failure(
        (async () => {
          for await (const event of engine.generate({ ...chat, signal: new AbortController().signal })) if (event.type === 'delta') deltas.push(event.text);
        })(),
      );
      expectOurs(error, 'upstream_error', server);
      expect(deltas).toEqual(server.behaviour.reply.slice(0, 2));
    }
  });

  it('a stream error naming an overloaded upstream is unavailable', async () => {
    llama.behaviour.streamErrorAfter = { chunks: 1, code: 503, message: 'server busy', type: 'unavailable_error' };
    expectOurs(await failure(collect(llamaEngine, chat)), 'unavailable', llama);
    vllm.behaviour.streamErrorAfter = { chunks: 1, code: 429, message: 'too many', type: 'TooManyRequests' };
    expectOurs(await failure(collect(vllmEngine, chat)), 'unavailable', vllm);
  });

  it('a stream cut before its end is upstream_error, never a short answer', async () => {
    for (const [server, engine] of [
      [vllm, vllmEngine],
      [llama, llamaEngine],
    ] as const) {
      server.behaviour.cutAfterChunks = 3;
      expectOurs(await failure(collect(engine, chat)), 'upstream_error', server);
      // Cut after every delta but before the finish and usage: still no answer.
      server.behaviour.cutAfterChunks = server.behaviour.reply.length;
      expectOurs(await failure(collect(engine, chat)), 'upstream_error', server);
      server.reset();
    }
  });

  it('a stream without usage is upstream_error: the counts are never estimated', async () => {
    for (const [server, engine] of [
      [vllm, vllmEngine],
      [llama, llamaEngine],
    ] as const) {
      server.behaviour.omitUsage = true;
      const error = expectOurs(await failure(collect(engine, chat)), 'upstream_error', server);
      expect(error.message).toBe('The upstream engine did not report token usage');
    }
  });

  it('a malformed stream is upstream_error', async () => {
    vllm.behaviour.malformedAfterChunks = 1;
    const error = expectOurs(await failure(collect(vllmEngine, chat)), 'upstream_error', vllm);
    expect(error.message).toBe('The upstream engine sent a malformed stream');
  });

  it('a route the upstream lacks is upstream_error, not an unknown model', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: `${vllm.url}/nowhere`, flavour: 'vllm' });
    try {
      expectOurs(await failure(collect(engine, chat)), 'upstream_error', vllm);
    } finally {
      await engine.close();
    }
  });
});

describe('timeouts', () => {
  let server: LoopbackOpenAiServer;

  beforeAll(async () => {
    server = await LoopbackOpenAiServer.start('vllm');
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  it('no first byte within firstByteMs is timeout, and the upstream request is cancelled', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: server.url, flavour: 'vllm', timeouts: { firstByteMs: 150 } });
    server.behaviour.headerDelayMs = 2_000;
    const closed = server.nextEarlyClose();
    const started = Date.now();
    const error = expectOurs(await failure(collect(engine, chat)), 'timeout', server);
    expect(error.message).toContain('first byte');
    expect(Date.now() - started).toBeLessThan(1_900);
    await closed;
    await engine.close();
  });

  it('a generation longer than totalMs is timeout even while chunks keep coming', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: server.url, flavour: 'vllm', timeouts: { firstByteMs: 1_000, totalMs: 300 } });
    server.behaviour.reply = Array.from({ length: 100 }, (_, i) => ` t${i}`);
    server.behaviour.chunkDelayMs = 30;
    const closed = server.nextEarlyClose();
    const error = expectOurs(await failure(collect(engine, chat)), 'timeout', server);
    expect(error.message).toContain('total');
    await closed;
    expect(server.requests.at(-1)!.closedEarly).toBe(true);
    await engine.close();
  });

  it('a listing slower than listingMs is timeout', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: server.url, flavour: 'vllm', timeouts: { listingMs: 100 } });
    server.behaviour.headerDelayMs = 1_000;
    expectOurs(await failure(engine.models()), 'timeout', server);
    expect(await engine.health()).toMatchObject({ ok: false });
    await engine.close();
  });

  it('a caller abort is the caller’s reason, not a timeout', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: server.url, flavour: 'vllm', timeouts: { firstByteMs: 5_000 } });
    server.behaviour.headerDelayMs = 2_000;
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('interface timeout')), 100);
    const error = await failure(collect(engine, { ...chat, signal: controller.signal }));
    expect(error).not.toBeInstanceOf(EngineError);
    expect((error as Error).message).toBe('interface timeout');
    await engine.close();
  });
});
