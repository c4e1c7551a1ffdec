import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openaiClient, startInferencePlatform, type InferencePlatform } from './inference-test-kit.js';

/**
 * Tool calling over the embedded llama engine (the random-weight `tiny`) through Service T with
 * the official openai client: tool_choice 'required' comes back as message.tool_calls whose
 * arguments are JSON of the tool's schema, and a stream's deltas join to the same kind of call.
 */
let running: InferencePlatform;
let client: OpenAI;

const TOOLS: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'], additionalProperties: false } },
  },
];

beforeAll(async () => {
  running = await startInferencePlatform({}, { contextSize: 512 });
  const key = await running.platform.issueKey('acme', 'text');
  client = openaiClient(running.platform.baseUrl, '/inference/text', key);
}, 120_000);

afterAll(async () => {
  await running?.close();
});

describe('tool calling on the embedded llama engine through Service T', () => {
  it("answers tool_choice 'required' with message.tool_calls", async () => {
    const answer = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: TOOLS, tool_choice: 'required', max_tokens: 80, seed: 1 });
    const choice = answer.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') return;
    expect(call.function.name).toBe('get_weather');
    expect(typeof (JSON.parse(call.function.arguments) as { city: unknown }).city).toBe('string');
  }, 120_000);

  it('streams the call as tool_calls deltas', async () => {
    const stream = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Weather?' }], tools: TOOLS, tool_choice: { type: 'function', function: { name: 'get_weather' } }, max_tokens: 80, seed: 2, stream: true });
    let args = '';
    let name = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      for (const piece of choice.delta.tool_calls ?? []) {
        name += piece.function?.name ?? '';
        args += piece.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(name).toBe('get_weather');
    expect(typeof (JSON.parse(args) as { city: unknown }).city).toBe('string');
    expect(finish).toBe('tool_calls');
  }, 120_000);
});
