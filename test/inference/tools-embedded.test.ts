import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openaiClient, startInferencePlatform, type InferencePlatform } from './inference-test-kit.js';

/**
 * Tool calling over the embedded llama engine (the random-weight `tiny`) through Service T with
 * the official openai client: tool_choice 'required' comes back as message.tool_calls whose
 * arguments are JSON of the tool's schema (one call with parallel_tool_calls false, up to four by
 * default, each with its own index and id), a stream's deltas join to the same kind of calls, and
 * tools without tool_choice ('auto') answer text or calls.
 */
let running: InferencePlatform;
let client: OpenAI;
let key: string;

const TOOLS: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'], additionalProperties: false } },
  },
];

beforeAll(async () => {
  running = await startInferencePlatform({}, { contextSize: 2048 });
  key = await running.platform.issueKey('acme', 'text');
  client = openaiClient(running.platform.baseUrl, '/inference/text', key);
}, 120_000);

afterAll(async () => {
  await running?.close();
});

describe('tool calling on the embedded llama engine through Service T', () => {
  it("answers tool_choice 'required' with parallel_tool_calls false with one call in message.tool_calls", async () => {
    const answer = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: TOOLS, tool_choice: 'required', parallel_tool_calls: false, max_tokens: 80, seed: 1 });
    const choice = answer.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') return;
    expect(call.function.name).toBe('get_weather');
    expect(typeof (JSON.parse(call.function.arguments) as { city: unknown }).city).toBe('string');
  }, 120_000);

  it('streams parallel calls (the default) as tool_calls deltas, each with its own index and id', async () => {
    let most = 0;
    for (const seed of [1, 2, 3, 4]) {
      const stream = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Weather?' }], tools: TOOLS, tool_choice: { type: 'function', function: { name: 'get_weather' } }, max_tokens: 500, seed, stream: true });
      const calls: { id: string; name: string; args: string }[] = [];
      let finish: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        for (const piece of choice.delta.tool_calls ?? []) {
          const call = (calls[piece.index] ??= { id: '', name: '', args: '' });
          call.id += piece.id ?? '';
          call.name += piece.function?.name ?? '';
          call.args += piece.function?.arguments ?? '';
        }
        finish = choice.finish_reason ?? finish;
      }
      const context = `seed ${seed}: ${JSON.stringify(calls)}`;
      expect(finish, context).toBe('tool_calls');
      expect(Object.keys(calls).map(Number), context).toEqual(calls.map((_, i) => i));
      expect(calls.length, context).toBeLessThanOrEqual(4);
      expect(new Set(calls.map((call) => call.id)).size, context).toBe(calls.length);
      for (const call of calls) {
        expect(call.id, context).toMatch(/^call_/);
        expect(call.name, context).toBe('get_weather');
        expect(typeof (JSON.parse(call.args) as { city: unknown }).city, context).toBe('string');
      }
      most = Math.max(most, calls.length);
    }
    expect(most, 'some seed makes more than one call').toBeGreaterThan(1);
  }, 240_000);

  it('counts tokens with tools as a chat call with them sees its prompt: the tools preamble included', async () => {
    const messages = [{ role: 'user' as const, content: 'Weather in Oslo?' }];
    const tokenize = async (body: Record<string, unknown>) => {
      const res = await fetch(`${running.platform.baseUrl}/inference/text/v1/tokenize`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      return ((await res.json()) as { count: number }).count;
    };
    const withTools = await tokenize({ model: 'tiny', messages, tools: TOOLS });
    const without = await tokenize({ model: 'tiny', messages });
    expect(withTools).toBeGreaterThan(without);
    // An independent reading: the prompt tokens a chat call with the same tools is billed.
    const answer = await client.chat.completions.create({ model: 'tiny', messages, tools: TOOLS, max_tokens: 1, seed: 1 });
    expect(answer.usage!.prompt_tokens).toBe(withTools);
  });

  it("answers tools without tool_choice ('auto') with text or calls, never a refusal", async () => {
    for (const seed of [1, 2, 3]) {
      const answer = await client.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: TOOLS, max_tokens: 500, seed });
      const choice = answer.choices[0]!;
      if (choice.message.tool_calls?.length) {
        expect(choice.finish_reason).toBe('tool_calls');
      } else {
        expect(choice.message.content?.length).toBeGreaterThan(0);
        expect(choice.message.content![0]).not.toBe('{');
      }
    }
  }, 240_000);
});
