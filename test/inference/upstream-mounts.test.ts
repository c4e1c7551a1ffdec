import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { choiceToGbnf, regexToGbnf } from '../../subgraphs/inference/engine/regex-grammar.js';
import { freePort } from '../support/free-port.js';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import type { TestPlatform } from '../support/platform-harness.js';
import { allIdle, everyMount, loopbackEngines, startUpstreamPlatform } from './inference-test-kit.js';
import { lastGeneration, listingOnlyServer, onGenerationOnly, sseData } from './upstream-behaviour.js';

/**
 * The platform over OpenAI-compatible upstreams: provider_a is a loopback vLLM, provider_b a
 * loopback llama.cpp server, provider_c an upstream that is not there. Service T runs on
 * provider_a, the gateway on all three. The openai client must get exactly what the upstream
 * answered, and the loopbacks' recorded requests show what the engine sent them.
 */
let platform: TestPlatform;
let vllm: LoopbackOpenAiServer;
let llama: LoopbackOpenAiServer;
let gonePort: number;
let textKey: string;

const VLLM_MODEL = 'vllm-model';
const LLAMA_MODEL = 'llama-model';
const GONE_MODEL = 'gone-model';
const REPLY = 'Hello, loopback world.';
// Words an upstream might say that must never reach a client.
const LEAKY = 'weights at /srv/models/secret.gguf on 10.9.8.7 refused prompt "my password"';

beforeAll(async () => {
  [vllm, llama] = await Promise.all([
    LoopbackOpenAiServer.start('vllm', [{ id: VLLM_MODEL, contextLength: 4096 }]),
    LoopbackOpenAiServer.start('llama.cpp', [{ id: LLAMA_MODEL, contextLength: 4096 }]),
  ]);
  gonePort = await freePort();
  ({ platform, textKey } = await startUpstreamPlatform({
    providers: [
      { id: 'provider_a', name: 'A', engines: loopbackEngines(vllm.url, 'vllm') },
      { id: 'provider_b', name: 'B', engines: loopbackEngines(llama.url, 'llama.cpp') },
      { id: 'provider_c', name: 'C', engines: loopbackEngines(`http://127.0.0.1:${gonePort}`, 'vllm') },
    ],
    interfaces: everyMount(['provider_a'], ['provider_a', 'provider_b', 'provider_c']),
  }));
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await Promise.all([vllm?.close(), llama?.close()]);
});

afterEach(() => {
  vllm.reset();
  llama.reset();
});

const serviceT = () => new OpenAI({ baseURL: `${platform.baseUrl}/inference/text/v1`, apiKey: textKey, maxRetries: 0 });
const gateway = () => new OpenAI({ baseURL: `${platform.baseUrl}/inference/gateway/v1`, apiKey: 'unused', maxRetries: 0 });

const ROUTES = [
  { name: 'Service T to vLLM', client: serviceT, model: VLLM_MODEL, server: () => vllm },
  { name: 'the gateway to vLLM', client: gateway, model: VLLM_MODEL, server: () => vllm },
  { name: 'the gateway to llama.cpp', client: gateway, model: LLAMA_MODEL, server: () => llama },
];

function expectedUsage(server: LoopbackOpenAiServer) {
  const { prompt_tokens, completion_tokens } = server.lastUsage!;
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

describe.each(ROUTES)('$name', ({ client, model, server }) => {
  it('answers a chat with exactly the upstream text and usage, asking the upstream for streamed usage', async () => {
    const done = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }], max_tokens: 20 });
    expect(done.choices[0]!.message).toMatchObject({ role: 'assistant', content: REPLY });
    expect(done.choices[0]!.finish_reason).toBe('stop');
    expect(done.model).toBe(model);
    expect(done.usage).toEqual(expectedUsage(server()));
    const sent = lastGeneration(server());
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({ model, stream: true, stream_options: { include_usage: true }, max_tokens: 20 });
  });

  it('gives the provider slot back after an empty answer, streamed or not', async () => {
    // The first event is then the done event, and the rest of the events is never read.
    server().behaviour.reply = [];
    for (let i = 0; i < 3; i++) {
      const done = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Say nothing' }] });
      expect(done.choices[0]!.message.content).toBe('');
      const stream = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Say nothing' }], stream: true });
      let finish: string | null | undefined;
      for await (const part of stream) finish = part.choices[0]?.finish_reason ?? finish;
      expect(finish).toBe('stop');
    }
    await allIdle(platform.baseUrl, 2_000);
  });

  it('streams without usage chunks when the client did not ask, though the upstream was asked', async () => {
    const stream = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }], stream: true });
    let text = '';
    let finish: string | null = null;
    const parts: OpenAI.ChatCompletionChunk[] = [];
    for await (const part of stream) {
      parts.push(part);
      text += part.choices[0]?.delta.content ?? '';
      finish = part.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe(REPLY);
    expect(finish).toBe('stop');
    expect(parts.every((part) => !('usage' in part))).toBe(true);
    expect(parts.every((part) => part.choices.length === 1)).toBe(true);
    expect(lastGeneration(server()).body.stream_options).toEqual({ include_usage: true });
  });

  it('streams with the upstream usage when the client asks', async () => {
    const stream = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const part of stream) {
      text += part.choices[0]?.delta.content ?? '';
      if (part.usage) usage = part.usage;
    }
    expect(text).toBe(REPLY);
    expect(usage).toEqual(expectedUsage(server()));
  });

  it('completes a raw prompt on the upstream /v1/completions, max_tokens ending it with length', async () => {
    const done = await client().completions.create({ model, prompt: 'Once upon a time', max_tokens: 3 });
    expect(done.object).toBe('text_completion');
    expect(done.choices[0]!.text).toBe('Hello, loop');
    expect(done.choices[0]!.finish_reason).toBe('length');
    expect(done.usage).toEqual(expectedUsage(server()));
    expect(lastGeneration(server())).toMatchObject({ path: '/v1/completions', body: { prompt: 'Once upon a time', max_tokens: 3, stream: true, stream_options: { include_usage: true } } });
  });
});

// The openai SDK's types lack the guided_* extensions; it sends unknown body fields as they are.
type Extended = OpenAI.ChatCompletionCreateParamsNonStreaming & Record<string, unknown>;
const ask = (model: string, extra: Record<string, unknown>) => gateway().chat.completions.create({ model, messages: [{ role: 'user', content: 'Answer' }], ...extra } as Extended);

const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

describe('guided output through the gateway', () => {
  it('reaches vLLM as structured_outputs only', async () => {
    for (const [extra, expected] of [
      [{ guided_json: SCHEMA }, { json: SCHEMA }],
      [{ guided_regex: '[0-9]{3}-[a-z]{2}' }, { regex: '[0-9]{3}-[a-z]{2}' }],
      [{ guided_choice: ['yes', 'no'] }, { choice: ['yes', 'no'] }],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: SCHEMA } } }, { json: SCHEMA }],
      [{ response_format: { type: 'json_object' } }, { json: { type: 'object' } }],
    ] as const) {
      vllm.requests.length = 0;
      const done = await ask(VLLM_MODEL, extra);
      expect(done.choices[0]!.message.content).toBe(REPLY);
      const body = lastGeneration(vllm).body;
      expect(body.structured_outputs, JSON.stringify(extra)).toEqual(expected);
      for (const name of ['guided_json', 'guided_regex', 'guided_choice', 'response_format', 'json_schema', 'grammar']) expect(body).not.toHaveProperty(name);
    }
  });

  it('reaches llama.cpp as json_schema or a GBNF grammar', async () => {
    for (const [extra, expected] of [
      [{ guided_json: SCHEMA }, { json_schema: SCHEMA }],
      [{ guided_regex: '[0-9]{3}-[a-z]{2}' }, { grammar: regexToGbnf('[0-9]{3}-[a-z]{2}') }],
      [{ guided_choice: ['yes', 'no'] }, { grammar: choiceToGbnf(['yes', 'no']) }],
    ] as const) {
      llama.requests.length = 0;
      await ask(LLAMA_MODEL, extra);
      const body = lastGeneration(llama).body;
      expect(body, JSON.stringify(extra)).toMatchObject(expected);
      for (const name of ['guided_json', 'guided_regex', 'guided_choice', 'structured_outputs', 'response_format']) expect(body).not.toHaveProperty(name);
    }
    expect(choiceToGbnf(['yes', 'no'])).toContain('"yes"');
  });

  it('refuses a sampling parameter vLLM has no name for, before anything is sent', async () => {
    const error = await ask(VLLM_MODEL, { typical_p: 0.5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).toMatchObject({ status: 422, code: 'unsupported_parameter', param: 'typical_p' });
    expect((error as Error).message).toContain('vllm');
    expect(vllm.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });
});

async function rawChat(model: string, extra: Record<string, unknown> = {}) {
  const response = await fetch(`${platform.baseUrl}/inference/gateway/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }], ...extra }),
  });
  return { response, text: await response.text() };
}

function expectNoLeak(text: string) {
  for (const word of ['/srv/models', '10.9.8.7', 'password', 'secret.gguf', String(new URL(vllm.url).port), String(new URL(llama.url).port)]) expect(text).not.toContain(word);
}

describe('upstream failures', () => {
  it('an upstream 500 or 401 is 502 upstream_error in our words, not the upstream body', async () => {
    for (const status of [500, 401]) {
      onGenerationOnly(vllm, { fail: { status, message: LEAKY, type: 'InternalServerError' } });
      const { response, text } = await rawChat(VLLM_MODEL);
      expect(response.status).toBe(502);
      const body = JSON.parse(text) as { error: Record<string, unknown> };
      expect(body.error).toMatchObject({ type: 'server_error', code: 'upstream_error', param: null });
      expect(body.error.message).toEqual(expect.any(String));
      expectNoLeak(text);
      expect(lastGeneration(vllm)).toBeTruthy();
      vllm.reset();
    }
  });

  it('an upstream 400 naming a parameter is the gateway table’s 422 naming it, still in our words', async () => {
    onGenerationOnly(llama, { fail: { status: 400, message: LEAKY } });
    const { response, text } = await rawChat(LLAMA_MODEL);
    expect(response.status).toBe(422);
    expect(JSON.parse(text)).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_value' } });
    expectNoLeak(text);
    onGenerationOnly(vllm, { fail: { status: 400, message: LEAKY, param: 'temperature' } });
    const named = await rawChat(VLLM_MODEL);
    expect(named.response.status).toBe(422);
    expect(JSON.parse(named.text)).toMatchObject({ error: { code: 'invalid_value', param: 'temperature' } });
    expectNoLeak(named.text);
  });

  it('llama.cpp still loading its model is 503 model_loading with Retry-After', async () => {
    onGenerationOnly(llama, { loading: true });
    const { response, text } = await rawChat(LLAMA_MODEL);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'model_loading', type: 'server_error' } });
    expect(lastGeneration(llama)).toBeTruthy();
    const error = await ask(LLAMA_MODEL, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error).toMatchObject({ status: 503, code: 'model_loading' });
  });

  it('an upstream that resets the connection is 502 or 503, never a hang', async () => {
    onGenerationOnly(vllm, { dropConnection: true });
    const { response, text } = await rawChat(VLLM_MODEL);
    expect([502, 503]).toContain(response.status);
    expect(JSON.parse(text).error.code).toMatch(/^(upstream_error|service_unavailable)$/);
    expectNoLeak(text);
  });

  it('an upstream that went away after listing its model is 503 service_unavailable', async () => {
    const listing = await listingOnlyServer(gonePort, GONE_MODEL);
    let closed = false;
    try {
      // The engine reads the listing now (a failed one is never cached), then the server goes.
      const listed = await fetch(`${platform.baseUrl}/inference/gateway/v1/models?provider=provider_c`);
      expect(((await listed.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toEqual([GONE_MODEL]);
      await listing.close();
      closed = true;
      const { response, text } = await rawChat(GONE_MODEL);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(JSON.parse(text)).toMatchObject({ error: { code: 'service_unavailable', type: 'server_error' } });
      expect(text).not.toContain(String(gonePort));
    } finally {
      if (!closed) await listing.close();
    }
  });

  it.each([
    { flavour: 'vLLM', model: VLLM_MODEL, server: () => vllm },
    { flavour: 'llama.cpp', model: LLAMA_MODEL, server: () => llama },
  ])('a $flavour stream that errors midway reaches the client as an error event, then the stream ends', async ({ model, server }) => {
    server().behaviour.streamErrorAfter = { chunks: 2, code: 500, message: LEAKY, type: 'server_error' };
    const stream = await gateway().chat.completions.create({ model, messages: [{ role: 'user', content: 'Hello' }], stream: true });
    let text = '';
    const error = await (async () => {
      for await (const part of stream) text += part.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).not.toContain('password');
    expect(text).toBe('Hello,');

    // The same on the wire: the chunks so far, one error event, [DONE], and the body ends.
    const { response, text: raw } = await rawChat(model, { stream: true });
    expect(response.status).toBe(200);
    const events = sseData(raw);
    expect(events.at(-1)).toBe('[DONE]');
    const failure = JSON.parse(events.at(-2)!) as { error: Record<string, unknown> };
    expect(failure.error).toMatchObject({ code: 'upstream_error', type: 'server_error' });
    expect(events.slice(0, -2).every((event) => 'choices' in JSON.parse(event))).toBe(true);
    expectNoLeak(raw);
  });

  it('a client that stops reading a stream closes the upstream request early', async () => {
    llama.behaviour.reply = Array.from({ length: 200 }, (_, i) => ` w${i}`);
    llama.behaviour.chunkDelayMs = 20;
    const closed = llama.nextEarlyClose();
    const stream = await gateway().chat.completions.create({ model: LLAMA_MODEL, messages: [{ role: 'user', content: 'Go on' }], stream: true });
    let text = '';
    for await (const part of stream) {
      text += part.choices[0]?.delta.content ?? '';
      if (text.length > 0) break;
    }
    expect(text).toBe(' w0');
    await closed;
    const request = lastGeneration(llama);
    expect(request.closedEarly).toBe(true);
    // The provider's slot was freed: the next call is served at once.
    llama.reset();
    const next = await ask(LLAMA_MODEL, {});
    expect(next.choices[0]!.message.content).toBe(REPLY);
  });
});
