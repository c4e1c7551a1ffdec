import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, streamText } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LoopbackOpenAiServer } from '../../support/loopback-openai-server.js';
import { baseUrlOf, keyOf, ROUTES, startClientPlatform, VLLM_REPLY, type ClientPlatform } from './client-platform.js';

/**
 * The Vercel AI SDK, as a user writes it, on every mount over the embedded llama.cpp and over a
 * vLLM-format upstream: `createOpenAI({ baseURL, apiKey })(model)` speaks the Responses API,
 * `.chat(model)` chat completions. The embedded model has random weights, so its text is checked
 * by usage and shape, the upstream's to the letter.
 */
let running: ClientPlatform;

beforeAll(async () => {
  running = await startClientPlatform();
}, 120_000);

afterAll(async () => {
  await running?.close();
});

afterEach(() => {
  running.vllm.behaviour = LoopbackOpenAiServer.defaults();
});

const THING = z.object({ name: z.string().max(8), size: z.number().int() });

const APIS = [
  { api: 'the Responses API (the default)', pick: (provider: ReturnType<typeof createOpenAI>, model: string) => provider(model) },
  { api: 'chat completions (.chat)', pick: (provider: ReturnType<typeof createOpenAI>, model: string) => provider.chat(model) },
];

describe.each(ROUTES.flatMap((route) => APIS.map((api) => ({ ...route, ...api }))))('$name over $engine, $api', ({ mount, keyed, model, embedded, pick }) => {
  const languageModel = () => pick(createOpenAI({ baseURL: baseUrlOf(running, mount), apiKey: keyOf(running, keyed) }), model);

  it('generateText', async () => {
    const result = await generateText({ model: languageModel(), prompt: 'Say hello', maxOutputTokens: 16, temperature: 0, maxRetries: 0 });
    if (embedded) {
      expect(result.finishReason).toBe('length');
      expect(result.usage.outputTokens).toBe(16);
    } else {
      expect(result.text).toBe(VLLM_REPLY);
      expect(result.finishReason).toBe('stop');
      expect(result.usage.outputTokens).toBe(running.vllm.lastUsage!.completion_tokens);
    }
  });

  it('streamText', async () => {
    const result = streamText({ model: languageModel(), prompt: 'Say hello', maxOutputTokens: 16, temperature: 0, maxRetries: 0 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe(await result.text);
    if (embedded) expect((await result.usage).outputTokens).toBe(16);
    else expect(text).toBe(VLLM_REPLY);
  });

  // zod's .int() sends the bounds ±(2^53 − 1), which the embedded engine's grammar enforces as a digit range;
  // 120 tokens hold the longest answer the grammar allows (8 characters, each at most a 6-character escape; a sign and 16 digits; white space).
  it('generateObject', async () => {
    // The loopback says what it is told to; the embedded engine is held to the schema by its grammar.
    if (!embedded) running.vllm.behaviour.reply = ['{"name": "fox",', ' "size": 3}'];
    const result = await generateObject({ model: languageModel(), schema: THING, prompt: 'A small thing', maxOutputTokens: 120, maxRetries: 0 });
    expect(THING.safeParse(result.object).success).toBe(true);
    if (!embedded) expect(result.object).toEqual({ name: 'fox', size: 3 });
  });
});
