import { createOpenAI } from '@ai-sdk/openai';
import { tool as aiTool, generateText, stepCountIs, streamText, type ModelMessage } from 'ai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LoopbackOpenAiServer } from '../../support/loopback-openai-server.js';
import { baseUrlOf, keyOf, ROUTES, startClientPlatform, VLLM_REPLY, type ClientPlatform } from './client-platform.js';

/**
 * Conversations with the Vercel AI SDK as users write them: the Responses API provider keeps
 * `store` on, so every earlier answer it is given back goes as an `item_reference` to that
 * answer's message id, on the second turn of a chat and in a tool loop whose first step wrote
 * text as well as a call. The platform keeps the responses it answered and resolves them.
 */
let running: ClientPlatform;

beforeAll(async () => {
  running = await startClientPlatform();
}, 120_000);

afterAll(async () => {
  await running?.close();
});

afterEach(() => {
  running.vllm.reset();
});

/** The chat messages the loopback vLLM was last asked with. */
const lastMessages = () => (running.vllm.requests.filter((r) => r.path === '/v1/chat/completions').at(-1)?.body as { messages: unknown[] }).messages;

describe.each(ROUTES)('$name over $engine', ({ mount, keyed, model, embedded }) => {
  const languageModel = () => createOpenAI({ baseURL: baseUrlOf(running, mount), apiKey: keyOf(running, keyed) })(model);

  it('generateText answers the second turn of a conversation (the first answer goes back as an item_reference)', async () => {
    const first = await generateText({ model: languageModel(), prompt: 'Hi', maxOutputTokens: 8, temperature: 0, maxRetries: 0 });
    const messages: ModelMessage[] = [{ role: 'user', content: 'Hi' }, ...first.response.messages, { role: 'user', content: 'More' }];
    const second = await generateText({ model: languageModel(), messages, maxOutputTokens: 8, temperature: 0, maxRetries: 0 });
    if (embedded) {
      expect(second.usage.outputTokens).toBe(8);
    } else {
      expect(second.text).toBe(VLLM_REPLY);
      // The engine got the whole conversation, the first answer's text resolved from its reference.
      expect(lastMessages()).toEqual([
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: first.text },
        { role: 'user', content: 'More' },
      ]);
    }
  });

  it('streamText answers the second turn of a streamed conversation', async () => {
    const first = streamText({ model: languageModel(), prompt: 'Hi', maxOutputTokens: 8, temperature: 0, maxRetries: 0 });
    await first.consumeStream();
    const messages: ModelMessage[] = [{ role: 'user', content: 'Hi' }, ...(await first.response).messages, { role: 'user', content: 'More' }];
    const second = streamText({ model: languageModel(), messages, maxOutputTokens: 8, temperature: 0, maxRetries: 0 });
    let failure: unknown;
    await second.consumeStream({ onError: (error) => void (failure = error) });
    expect(failure).toBeUndefined();
    expect(await second.finishReason).toBe(embedded ? 'length' : 'stop');
    if (!embedded) expect(await second.text).toBe(VLLM_REPLY);
  });

  it.skipIf(embedded)('runs a tool loop whose first step writes text as well as a call', async () => {
    running.vllm.behaviour = { ...LoopbackOpenAiServer.defaults(), callText: 'Let me look.' };
    const weather = aiTool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => ({ sky: 'clear' }) });
    const result = await generateText({ model: languageModel(), prompt: 'Use weather for Oslo', tools: { weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
    expect(result.steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(result.steps[0]!.text).toBe('Let me look.');
    expect(result.text).toBe(VLLM_REPLY);
    const [user, assistant, toolTurn] = lastMessages() as { role: string; content: unknown; tool_calls?: { function: { name: string } }[] }[];
    expect(user).toEqual({ role: 'user', content: 'Use weather for Oslo' });
    expect(assistant).toMatchObject({ role: 'assistant', content: 'Let me look.', tool_calls: [{ function: { name: 'weather' } }] });
    expect(toolTurn).toMatchObject({ role: 'tool', content: JSON.stringify({ sky: 'clear' }) });
  });

  it.skipIf(embedded)('streams a tool loop whose first step writes text as well as a call', async () => {
    running.vllm.behaviour = { ...LoopbackOpenAiServer.defaults(), callText: 'Let me look.' };
    const weather = aiTool({ description: 'The weather in a city', inputSchema: z.object({ city: z.string() }), execute: async () => ({ sky: 'clear' }) });
    const result = streamText({ model: languageModel(), prompt: 'Use weather for Oslo', tools: { weather }, stopWhen: stepCountIs(3), maxRetries: 0 });
    let failure: unknown;
    await result.consumeStream({ onError: (error) => void (failure = error) });
    expect(failure).toBeUndefined();
    expect((await result.steps).map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(await result.text).toBe(VLLM_REPLY);
    expect(lastMessages()[1]).toMatchObject({ role: 'assistant', content: 'Let me look.', tool_calls: [{ function: { name: 'weather' } }] });
  });
});
