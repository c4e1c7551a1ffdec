import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EngineError, type GenerationRequest } from '../../../../subgraphs/inference/engine/text-engine.js';
import { OpenAiUpstreamEngine } from '../../../../subgraphs/inference/engines/openai-upstream/openai-upstream-engine.js';
import { LoopbackOpenAiServer } from '../../../support/loopback-openai-server.js';
import { collect, failure } from './collect.js';

const messages = [
  { role: 'system' as const, content: 'You answer briefly.' },
  { role: 'user' as const, content: 'Say hello to the loopback world.' },
];

describe.each(['vllm', 'llama.cpp'] as const)('generation against %s', (flavour) => {
  let server: LoopbackOpenAiServer;
  let engine: OpenAiUpstreamEngine;

  beforeAll(async () => {
    server = await LoopbackOpenAiServer.start(flavour);
    engine = new OpenAiUpstreamEngine({ baseUrl: server.url, flavour, apiKey: 'sk-upstream-secret' });
  });
  afterAll(async () => {
    await engine.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  it('streams chat deltas and ends with the exact usage the upstream reported', async () => {
    const deltas: string[] = [];
    const events = [];
    for await (const event of engine.generate({ model: 'loop-model', input: { kind: 'chat', messages }, sampling: {}, signal: new AbortController().signal })) {
      events.push(event.type);
      if (event.type === 'delta') deltas.push(event.text);
      else if (event.type === 'done') {
        expect(event.finishReason).toBe('stop');
        expect(event.usage).toEqual({ promptTokens: server.lastUsage!.prompt_tokens, completionTokens: server.lastUsage!.completion_tokens });
      }
    }
    expect(deltas).toEqual(server.behaviour.reply);
    expect(events.at(-1)).toBe('done');
    expect(events.filter((type) => type === 'done')).toHaveLength(1);
    expect(server.lastUsage!.prompt_tokens).toBeGreaterThan(10);
  });

  it('collects a whole answer as a non-streaming call would', async () => {
    server.behaviour.reply = ['One', ' two', ' three'];
    const answer = await collect(engine, { model: 'loop-model', input: { kind: 'chat', messages }, sampling: {} });
    expect(answer.text).toBe('One two three');
    expect(answer.usage.completionTokens).toBe(3);
  });

  it('sends every request streaming with include_usage, the model, messages and the bearer key', async () => {
    await collect(engine, { model: 'loop-model', input: { kind: 'chat', messages }, sampling: {} });
    const request = server.requests.at(-1)!;
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer sk-upstream-secret');
    expect(request.body).toEqual({ model: 'loop-model', messages, stream: true, stream_options: { include_usage: true } });
  });

  it('runs raw completions on /v1/completions with the prompt', async () => {
    const answer = await collect(engine, { model: 'loop-model', input: { kind: 'completion', prompt: 'Once upon a time' }, sampling: { maxTokens: 50 } });
    expect(server.requests.at(-1)!.path).toBe('/v1/completions');
    expect(server.requests.at(-1)!.body).toMatchObject({ prompt: 'Once upon a time', max_tokens: 50, stream: true, stream_options: { include_usage: true } });
    expect(answer.text).toBe(server.behaviour.reply.join(''));
    expect(answer.usage.promptTokens).toBe(server.lastUsage!.prompt_tokens);
  });

  it('reports length when max_tokens cut the answer, and stop when a stop string ended it', async () => {
    const cut = await collect(engine, { model: 'loop-model', input: { kind: 'chat', messages }, sampling: { maxTokens: 2 } });
    expect(cut).toMatchObject({ text: 'Hello,', finishReason: 'length', usage: { completionTokens: 2 } });
    const stopped = await collect(engine, { model: 'loop-model', input: { kind: 'chat', messages }, sampling: { stop: [' world'] } });
    expect(stopped).toMatchObject({ text: 'Hello, loopback', finishReason: 'stop', usage: { completionTokens: 4 } });
  });

  it('reuses one pooled keep-alive connection for sequential requests', async () => {
    const before = server.connections;
    for (let i = 0; i < 4; i++) await collect(engine, { model: 'loop-model', input: { kind: 'chat', messages }, sampling: {} });
    await engine.models();
    await engine.health();
    expect(server.connections - before).toBeLessThanOrEqual(1);
    expect(server.requests).toHaveLength(6);
  });

  it('cancels the upstream request at once when the signal aborts mid-stream', async () => {
    server.behaviour.reply = Array.from({ length: 200 }, (_, i) => ` w${i}`);
    server.behaviour.chunkDelayMs = 20;
    const controller = new AbortController();
    const closed = server.nextEarlyClose();
    const seen: string[] = [];
    const run = (async () => {
      for await (const event of engine.generate({ model: 'loop-model', input: { kind: 'chat', messages }, sampling: {}, signal: controller.signal }))
        if (event.type === 'delta') {
          seen.push(event.text);
          if (seen.length === 3) controller.abort(new Error('client went away'));
        }
    })();
    const error = await failure(run);
    expect((error as Error).message).toBe('client went away');
    await closed;
    expect(server.requests.at(-1)!.closedEarly).toBe(true);
    expect(seen.length).toBeLessThan(10);
  });

  it('cancels the upstream request when the consumer stops reading', async () => {
    server.behaviour.reply = Array.from({ length: 200 }, (_, i) => ` w${i}`);
    server.behaviour.chunkDelayMs = 10;
    const closed = server.nextEarlyClose();
    for await (const event of engine.generate({ model: 'loop-model', input: { kind: 'chat', messages }, sampling: {}, signal: new AbortController().signal }))
      if (event.type === 'delta') break;
    await closed;
    expect(server.requests.at(-1)!.closedEarly).toBe(true);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone before'));
    const error = await failure(collect(engine, { model: 'loop-model', input: { kind: 'chat', messages }, sampling: {}, signal: controller.signal }));
    expect((error as Error).message).toBe('gone before');
    expect(server.requests).toHaveLength(0);
  });
});

describe('sampling parameters by flavour', () => {
  let vllm: LoopbackOpenAiServer;
  let llama: LoopbackOpenAiServer;
  const engines: OpenAiUpstreamEngine[] = [];
  const engineFor = (server: LoopbackOpenAiServer, flavour: 'vllm' | 'llama.cpp' | 'ollama' | 'openai') => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: server.url, flavour });
    engines.push(engine);
    return engine;
  };

  beforeAll(async () => {
    [vllm, llama] = await Promise.all([LoopbackOpenAiServer.start('vllm'), LoopbackOpenAiServer.start('llama.cpp')]);
  });
  afterAll(async () => {
    await Promise.all(engines.map((engine) => engine.close()));
    await Promise.all([vllm.close(), llama.close()]);
  });

  const chat: Pick<GenerationRequest, 'model' | 'input'> = { model: 'loop-model', input: { kind: 'chat', messages } };
  const common = { temperature: 0.7, topP: 0.9, maxTokens: 64, stop: ['\n\n'], seed: 42, presencePenalty: 0.5, frequencyPenalty: 0.25 };
  const commonWire = { temperature: 0.7, top_p: 0.9, max_tokens: 64, stop: ['\n\n'], seed: 42, presence_penalty: 0.5, frequency_penalty: 0.25 };

  it('vLLM receives top_k, min_p and repetition_penalty under its names', async () => {
    await collect(engineFor(vllm, 'vllm'), { ...chat, sampling: { ...common, topK: 20, minP: 0.05, repetitionPenalty: 1.1 } });
    expect(vllm.requests.at(-1)!.body).toEqual({
      model: 'loop-model',
      messages,
      ...commonWire,
      top_k: 20,
      min_p: 0.05,
      repetition_penalty: 1.1,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("llama.cpp receives Service I's extras under its names (repeat_penalty, typical_p, DRY, mirostat)", async () => {
    const sampling = { ...common, topK: 40, minP: 0.1, repetitionPenalty: 1.2, typicalP: 0.95, dryMultiplier: 0.8, dryBase: 1.75, dryAllowedLength: 2, mirostat: 2 };
    await collect(engineFor(llama, 'llama.cpp'), { ...chat, sampling });
    expect(llama.requests.at(-1)!.body).toEqual({
      model: 'loop-model',
      messages,
      ...commonWire,
      top_k: 40,
      min_p: 0.1,
      repeat_penalty: 1.2,
      typical_p: 0.95,
      dry_multiplier: 0.8,
      dry_base: 1.75,
      dry_allowed_length: 2,
      mirostat: 2,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('lists in unsupported what each flavour cannot take, and refuses it without calling the upstream', async () => {
    expect([...engineFor(vllm, 'vllm').unsupported].sort()).toEqual(
      ['dryAllowedLength', 'dryBase', 'dryMultiplier', 'mirostat', 'noRepeatNgramSize', 'tfs', 'topA', 'typicalP'].sort(),
    );
    expect([...engineFor(llama, 'llama.cpp').unsupported].sort()).toEqual(['noRepeatNgramSize', 'tfs', 'topA'].sort());
    expect([...engineFor(vllm, 'ollama').unsupported]).toEqual(expect.arrayContaining(['topK', 'minP', 'repetitionPenalty', 'guided_regex', 'guided_choice']));
    expect(engineFor(vllm, 'ollama').unsupported.has('guided_json')).toBe(false);

    for (const [engine, server, sampling, param] of [
      [engineFor(vllm, 'vllm'), vllm, { typicalP: 0.9 }, 'typical_p'],
      [engineFor(vllm, 'vllm'), vllm, { noRepeatNgramSize: 3 }, 'no_repeat_ngram_size'],
      [engineFor(llama, 'llama.cpp'), llama, { tfs: 0.95 }, 'tfs'],
      [engineFor(llama, 'llama.cpp'), llama, { topA: 0.2 }, 'top_a'],
      [engineFor(vllm, 'ollama'), vllm, { topK: 5 }, 'top_k'],
      [engineFor(vllm, 'openai'), vllm, { minP: 0.1 }, 'min_p'],
    ] as const) {
      const sent = server.requests.length;
      const error = await failure(collect(engine, { ...chat, sampling }));
      expect(error).toBeInstanceOf(EngineError);
      expect(error).toMatchObject({ reason: 'unsupported_parameter', param });
      expect(server.requests.length).toBe(sent);
    }
  });
});

describe('guided output by flavour', () => {
  let vllm: LoopbackOpenAiServer;
  let llama: LoopbackOpenAiServer;
  let engines: Record<'vllm' | 'llama.cpp' | 'ollama' | 'openai', OpenAiUpstreamEngine>;
  const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false };

  beforeAll(async () => {
    [vllm, llama] = await Promise.all([LoopbackOpenAiServer.start('vllm'), LoopbackOpenAiServer.start('llama.cpp')]);
    engines = {
      vllm: new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'vllm' }),
      'llama.cpp': new OpenAiUpstreamEngine({ baseUrl: llama.url, flavour: 'llama.cpp' }),
      // Ollama and OpenAI speak the chat wire vLLM's loopback also answers.
      ollama: new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'ollama' }),
      openai: new OpenAiUpstreamEngine({ baseUrl: vllm.url, flavour: 'openai' }),
    };
  });
  afterAll(async () => {
    await Promise.all(Object.values(engines).map((engine) => engine.close()));
    await Promise.all([vllm.close(), llama.close()]);
  });

  const sent = (server: LoopbackOpenAiServer) => {
    const { model, messages: _messages, prompt: _prompt, stream, stream_options, ...rest } = server.requests.at(-1)!.body as Record<string, unknown>;
    expect({ model, stream, stream_options }).toEqual({ model: 'loop-model', stream: true, stream_options: { include_usage: true } });
    return rest;
  };

  it('vLLM gets structured_outputs (json, regex, choice), never the guided_* names it ignores', async () => {
    const chat = { model: 'loop-model', input: { kind: 'chat' as const, messages }, sampling: {} };
    await collect(engines.vllm, { ...chat, guided: { kind: 'json', schema } });
    expect(sent(vllm)).toEqual({ structured_outputs: { json: schema } });
    await collect(engines.vllm, { ...chat, guided: { kind: 'regex', pattern: '\\d{3}-[a-z]+' } });
    expect(sent(vllm)).toEqual({ structured_outputs: { regex: '\\d{3}-[a-z]+' } });
    await collect(engines.vllm, { model: 'loop-model', input: { kind: 'completion', prompt: 'Sentiment:' }, sampling: {}, guided: { kind: 'choice', choices: ['positive', 'negative'] } });
    expect(sent(vllm)).toEqual({ structured_outputs: { choice: ['positive', 'negative'] } });
  });

  it('llama.cpp gets json_schema for JSON and GBNF grammars for choices and regular expressions', async () => {
    const chat = { model: 'loop-model', input: { kind: 'chat' as const, messages }, sampling: {} };
    await collect(engines['llama.cpp'], { ...chat, guided: { kind: 'json', schema } });
    expect(sent(llama)).toEqual({ json_schema: schema });
    await collect(engines['llama.cpp'], { ...chat, guided: { kind: 'choice', choices: ['yes', 'say "no"', 'back\\slash\nline'] } });
    expect(sent(llama)).toEqual({ grammar: 'root ::= "yes" | "say \\"no\\"" | "back\\\\slash\\nline"\n' });
    await collect(engines['llama.cpp'], { ...chat, guided: { kind: 'regex', pattern: '^\\d{3}-[a-z]+$' } });
    expect(sent(llama)).toEqual({ grammar: 'root ::= [0-9]{3} "-" [a-z]+\n' });
    const count = llama.requests.length;
    // A pattern outside the grammar subset is the client's bad value, refused before any request.
    const error = await failure(collect(engines['llama.cpp'], { ...chat, guided: { kind: 'regex', pattern: '(a)\\1' } }));
    expect(error).toMatchObject({ reason: 'invalid_request', param: 'guided_regex' });
    expect(llama.requests.length).toBe(count);
  });

  it('OpenAI gets a strict response_format json_schema; Ollama the same without strict; regex and choice are refused', async () => {
    const chat = { model: 'loop-model', input: { kind: 'chat' as const, messages }, sampling: {} };
    await collect(engines.openai, { ...chat, guided: { kind: 'json', schema } });
    expect(sent(vllm)).toEqual({ response_format: { type: 'json_schema', json_schema: { name: 'guided', schema, strict: true } } });
    await collect(engines.ollama, { ...chat, guided: { kind: 'json', schema } });
    expect(sent(vllm)).toEqual({ response_format: { type: 'json_schema', json_schema: { name: 'guided', schema } } });
    for (const engine of [engines.openai, engines.ollama]) {
      expect(await failure(collect(engine, { ...chat, guided: { kind: 'regex', pattern: 'a+' } }))).toMatchObject({ reason: 'unsupported_parameter', param: 'guided_regex' });
      expect(await failure(collect(engine, { ...chat, guided: { kind: 'choice', choices: ['a'] } }))).toMatchObject({ reason: 'unsupported_parameter', param: 'guided_choice' });
      // The legacy completions route has no response_format.
      expect(
        await failure(collect(engine, { model: 'loop-model', input: { kind: 'completion', prompt: 'x' }, sampling: {}, guided: { kind: 'json', schema } })),
      ).toMatchObject({ reason: 'unsupported_parameter', param: 'guided_json' });
    }
  });
});

describe('images and closing', () => {
  let server: LoopbackOpenAiServer;

  beforeAll(async () => {
    server = await LoopbackOpenAiServer.start('vllm');
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  const picture = (url: string) => [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'What is this?' }, { type: 'image_url' as const, image_url: { url } }] }];

  it('passes a data URI through as sent, and sends an image URL as the data URI of what it serves', async () => {
    // A PNG signature is all the sniffing needs.
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const images = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(png));
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    const engine = new OpenAiUpstreamEngine({ baseUrl: server.url, flavour: 'vllm', allowPrivateImageUrls: ['127.0.0.1'] });
    try {
      const uri = 'data:image/png;base64,iVBORw0KGgo=';
      await collect(engine, { model: 'loop-model', input: { kind: 'chat', messages: picture(uri) }, sampling: {} });
      expect((server.requests.at(-1)!.body as { messages: unknown }).messages).toEqual(picture(uri));
      const url = `http://127.0.0.1:${(images.address() as AddressInfo).port}/cat.png`;
      await collect(engine, { model: 'loop-model', input: { kind: 'chat', messages: picture(url) }, sampling: {} });
      expect((server.requests.at(-1)!.body as { messages: unknown }).messages).toEqual(picture(`data:image/png;base64,${png.toString('base64')}`));
      const refused = await failure(collect(engine, { model: 'loop-model', input: { kind: 'chat', messages: picture('http://169.254.169.254/latest/meta-data/') }, sampling: {} }));
      expect(refused).toMatchObject({ reason: 'invalid_request', param: 'messages[0].content[1].image_url.url' });
      expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
    } finally {
      await engine.close();
      await new Promise((resolve) => images.close(resolve));
    }
  });

  it('close() cancels a generation under way and closes the pool; a second close is harmless', async () => {
    const engine = new OpenAiUpstreamEngine({ baseUrl: server.url, flavour: 'vllm' });
    server.behaviour.reply = Array.from({ length: 200 }, (_, i) => ` w${i}`);
    server.behaviour.chunkDelayMs = 20;
    const closed = server.nextEarlyClose();
    const iterator = engine.generate({ model: 'loop-model', input: { kind: 'chat', messages }, sampling: {}, signal: new AbortController().signal })[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ type: 'delta' });
    await engine.close();
    const error = await failure(iterator.next());
    expect(error).toMatchObject({ reason: 'unavailable' });
    await closed;
    await engine.close();
    expect(await failure(collect(engine, { model: 'loop-model', input: { kind: 'chat', messages }, sampling: {} }))).toMatchObject({ reason: 'unavailable' });
  });
});
