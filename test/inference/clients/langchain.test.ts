import { HumanMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrlOf, keyOf, ROUTES, startClientPlatform, VLLM_REPLY, type ClientPlatform } from './client-platform.js';

/**
 * LangChain's ChatOpenAI, as a user writes it, on every mount over the embedded llama.cpp and over
 * a vLLM-format upstream. The embedded model has random weights, so its text is checked by usage
 * and shape, the upstream's to the letter.
 */
let running: ClientPlatform;

beforeAll(async () => {
  running = await startClientPlatform();
}, 120_000);

afterAll(async () => {
  await running?.close();
});

const WEATHER = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};

describe.each(ROUTES)('$name over $engine', ({ mount, keyed, model, embedded }) => {
  const chat = () => new ChatOpenAI({ model, apiKey: keyOf(running, keyed), configuration: { baseURL: baseUrlOf(running, mount) }, maxTokens: 8, temperature: 0, maxRetries: 0 });

  it('invoke', async () => {
    const answer = await chat().invoke('Say hello');
    if (embedded) expect(answer.usage_metadata?.output_tokens).toBe(8);
    else expect(answer.content).toBe(VLLM_REPLY);
  });

  it('stream', async () => {
    let text = '';
    for await (const chunk of await chat().stream('Say hello')) text += typeof chunk.content === 'string' ? chunk.content : '';
    if (embedded) expect(text.length).toBeGreaterThan(0);
    else expect(text).toBe(VLLM_REPLY);
  });

  // The second turn as LangChain sends it: the whole history (its earlier answer as an assistant
  // message item with its msg_ id), or only the new message with previous_response_id.
  it('a second turn over the Responses API, with the history or with previous_response_id', async () => {
    const responses = new ChatOpenAI({ model, apiKey: keyOf(running, keyed), configuration: { baseURL: baseUrlOf(running, mount) }, maxTokens: 8, temperature: 0, maxRetries: 0, useResponsesApi: true });
    const hello = new HumanMessage('Say hello');
    const first = await responses.invoke([hello]);
    const again = new HumanMessage('Again');
    const withHistory = await responses.invoke([hello, first, again]);
    const chained = await responses.invoke([again], { previous_response_id: first.response_metadata.id as string });
    for (const answer of [withHistory, chained]) {
      if (embedded) expect(answer.usage_metadata?.output_tokens).toBe(8);
      else expect(answer.text).toBe(VLLM_REPLY);
    }
    // The upstream was given the same conversation both ways.
    if (!embedded) {
      const sent = running.vllm.requests.filter((r) => r.path === '/v1/chat/completions').slice(-2).map((r) => (r.body as { messages: unknown[] }).messages);
      expect(sent[1]).toEqual(sent[0]);
      expect(sent[0]).toHaveLength(3);
    }
    // Over the embedded engine, the prompt both ways is the same length too.
    expect(chained.usage_metadata?.input_tokens).toBe(withHistory.usage_metadata?.input_tokens);
  });

  it('invoke over the Responses API (useResponsesApi)', async () => {
    const responses = new ChatOpenAI({ model, apiKey: keyOf(running, keyed), configuration: { baseURL: baseUrlOf(running, mount) }, maxTokens: 16, temperature: 0, maxRetries: 0, useResponsesApi: true });
    const answer = await responses.invoke('Say hello');
    if (embedded) expect(answer.usage_metadata?.output_tokens).toBe(16);
    else expect(answer.text).toBe(VLLM_REPLY);
  });
});
