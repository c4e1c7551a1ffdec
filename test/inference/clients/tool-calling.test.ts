import { createOpenAI } from '@ai-sdk/openai';
import { tool as aiTool, generateText, stepCountIs, streamText } from 'ai';
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { baseUrlOf, keyOf, ROUTES, startClientPlatform, type ClientPlatform } from './client-platform.js';

/**
 * Tool calling with three clients as users write them (the official openai client, the Vercel AI
 * SDK, LangChain's ChatOpenAI), on every mount, over chat completions and the Responses API. The
 * embedded model has random weights, so a named tool (or `required`) makes the call certain and
 * its arguments are checked against the tool's schema, not by value; with the clients' default
 * ('auto') the answer is text or calls, and each shape is checked. parallel_tool_calls is left at
 * its default (true): the random model may write several calls.
 */
let running: ClientPlatform;

beforeAll(async () => {
  running = await startClientPlatform();
}, 120_000);

afterAll(async () => {
  await running?.close();
});

// A bounded city: the random-weight embedded model writes an unbounded string on past any max tokens.
const CITY = z.object({ city: z.string().max(12) });
const PARAMETERS = { type: 'object', properties: { city: { type: 'string', maxLength: 12 } }, required: ['city'], additionalProperties: false };
// Four calls' whole text fits (the engine's bound with parallel_tool_calls): the random model's
// vocabulary is mostly single characters, and the wrapper {"name": …, "arguments": …} with its
// white space takes some 40 tokens before the city.
const CALL_TOKENS = 800;
const argumentsOk = (text: string) => CITY.safeParse(JSON.parse(text)).success;

describe.each(ROUTES)('$name over $engine', ({ mount, keyed, model }) => {
  const client = () => new OpenAI({ baseURL: baseUrlOf(running, mount), apiKey: keyOf(running, keyed), maxRetries: 0 });
  const chatTools = [{ type: 'function' as const, function: { name: 'weather', description: 'The weather in a city', parameters: PARAMETERS } }];
  const responseTools = [{ type: 'function' as const, name: 'weather', description: 'The weather in a city', parameters: PARAMETERS, strict: true }];

  it('openai: chat.completions.create calls the named tool, and answers its result', async () => {
    const first = await client().chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: chatTools,
      tool_choice: { type: 'function', function: { name: 'weather' } },
      max_tokens: CALL_TOKENS,
    });
    const message = first.choices[0]!.message;
    const call = message.tool_calls![0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') return;
    expect(call.function.name).toBe('weather');
    expect(argumentsOk(call.function.arguments)).toBe(true);
    const second = await client().chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Weather in Oslo?' }, message, { role: 'tool', tool_call_id: call.id, content: '3 °C' }],
      tools: chatTools,
      // tool_choice left at its default, 'auto': text or calls.
      max_tokens: 8,
    });
    expect(second.usage!.completion_tokens).toBeGreaterThan(0);
    expect(['stop', 'length', 'tool_calls']).toContain(second.choices[0]!.finish_reason);
  });

  it('openai: a streamed chat completion sends the call as tool_calls deltas', async () => {
    const stream = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather?' }], tools: chatTools, tool_choice: 'required', max_tokens: CALL_TOKENS, stream: true });
    const calls: { id: string; name: string; args: string }[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      finish = chunk.choices[0]?.finish_reason ?? finish;
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        const call = (calls[delta.index] ??= { id: '', name: '', args: '' });
        call.id += delta.id ?? '';
        call.name += delta.function?.name ?? '';
        call.args += delta.function?.arguments ?? '';
      }
    }
    expect(finish).toBe('tool_calls');
    expect(calls.length).toBeGreaterThanOrEqual(1);
    // Indexes from 0 without a gap, each call with an id of its own.
    expect(Object.keys(calls).map(Number)).toEqual(calls.map((_, i) => i));
    expect(new Set(calls.map((call) => call.id)).size).toBe(calls.length);
    for (const call of calls) {
      expect(call.name).toBe('weather');
      expect(argumentsOk(call.args)).toBe(true);
    }
  });

  it('openai: responses.create answers a function_call item, and takes its function_call_output', async () => {
    const first = await client().responses.create({ model, input: 'Weather in Oslo?', tools: responseTools, tool_choice: { type: 'function', name: 'weather' }, max_output_tokens: CALL_TOKENS });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'weather', status: 'completed', id: expect.stringMatching(/^fc_/) });
    if (call?.type !== 'function_call') return;
    expect(argumentsOk(call.arguments)).toBe(true);
    const second = await client().responses.create({
      model,
      input: [{ role: 'user', content: 'Weather in Oslo?' }, call, { type: 'function_call_output', call_id: call.call_id, output: '3 °C' }],
      tools: responseTools,
      max_output_tokens: 8,
    });
    expect(second.usage!.output_tokens).toBeGreaterThan(0);
  });

  it('openai: a streamed response sends the function_call item and its argument deltas', async () => {
    const stream = await client().responses.create({ model, input: 'Weather?', tools: responseTools, tool_choice: 'required', max_output_tokens: CALL_TOKENS, stream: true });
    const types: string[] = [];
    const deltas = new Map<number, string>();
    const done = new Map<number, string>();
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.function_call_arguments.delta') deltas.set(event.output_index, (deltas.get(event.output_index) ?? '') + event.delta);
      if (event.type === 'response.function_call_arguments.done') done.set(event.output_index, event.arguments);
    }
    expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.output_item.done');
    expect(done.size).toBeGreaterThanOrEqual(1);
    expect(done).toEqual(deltas);
    for (const args of done.values()) expect(argumentsOk(args)).toBe(true);
  });

  const APIS = [
    { api: 'the Responses API', pick: (provider: ReturnType<typeof createOpenAI>) => provider(model) },
    { api: 'chat completions', pick: (provider: ReturnType<typeof createOpenAI>) => provider.chat(model) },
  ];
  for (const { api, pick } of APIS) {
    const languageModel = () => pick(createOpenAI({ baseURL: baseUrlOf(running, mount), apiKey: keyOf(running, keyed) }));
    const calls: string[] = [];
    const weather = aiTool({
      description: 'The weather in a city',
      inputSchema: CITY,
      execute: async ({ city }) => {
        calls.push(city);
        return `3 °C in ${city}`;
      },
    });

    it(`Vercel AI SDK over ${api}: generateText runs the tool and answers its result in a second step`, async () => {
      calls.length = 0;
      const result = await generateText({ model: languageModel(), prompt: 'Weather in Oslo?', tools: { weather }, toolChoice: { type: 'tool', toolName: 'weather' }, prepareStep: ({ stepNumber }) => (stepNumber > 0 ? { toolChoice: 'none' } : {}), stopWhen: stepCountIs(2), maxOutputTokens: CALL_TOKENS, maxRetries: 0 });
      expect(result.steps).toHaveLength(2);
      const first = result.steps[0]!;
      expect(first.toolCalls.length).toBeGreaterThanOrEqual(1);
      expect(calls).toHaveLength(first.toolCalls.length);
      for (const [i, call] of first.toolCalls.entries()) {
        expect(call).toMatchObject({ toolName: 'weather' });
        expect(first.toolResults[i]).toMatchObject({ toolName: 'weather', output: `3 °C in ${calls[i]}` });
      }
    });

    it(`Vercel AI SDK over ${api}: generateText with its default toolChoice ('auto') answers text or runs the tools`, async () => {
      calls.length = 0;
      // Greedy (temperature 0), so the answer is the same on every run: sampled, the random model's
      // first token is its end in about one run of two hundred, and an empty text is a valid answer.
      const result = await generateText({ model: languageModel(), prompt: 'Weather in Oslo?', tools: { weather }, temperature: 0, stopWhen: stepCountIs(2), maxOutputTokens: CALL_TOKENS, maxRetries: 0 });
      const first = result.steps[0]!;
      expect(calls).toHaveLength(first.toolCalls.length);
      if (first.toolCalls.length === 0) {
        expect(first.text.length).toBeGreaterThan(0);
        expect(['stop', 'length']).toContain(first.finishReason);
      } else {
        expect(first.finishReason).toBe('tool-calls');
        for (const call of first.toolCalls) expect(call).toMatchObject({ toolName: 'weather' });
      }
    });

    it(`Vercel AI SDK over ${api}: streamText streams the tool call`, async () => {
      calls.length = 0;
      const result = streamText({ model: languageModel(), prompt: 'Weather?', tools: { weather }, toolChoice: 'required', stopWhen: stepCountIs(1), maxOutputTokens: CALL_TOKENS, maxRetries: 0 });
      const parts: string[] = [];
      for await (const part of result.fullStream) parts.push(part.type);
      expect(parts).toContain('tool-call');
      const toolCalls = await result.toolCalls;
      for (const call of toolCalls) expect(call).toMatchObject({ toolName: 'weather' });
      expect(calls).toHaveLength(toolCalls.length);
    });
  }

  for (const useResponsesApi of [false, true]) {
    const chat = () => new ChatOpenAI({ model, apiKey: keyOf(running, keyed), configuration: { baseURL: baseUrlOf(running, mount) }, maxTokens: CALL_TOKENS, temperature: 0, maxRetries: 0, useResponsesApi });
    const tools = [{ type: 'function' as const, function: { name: 'weather', description: 'The weather in a city', parameters: PARAMETERS } }];

    it(`LangChain ChatOpenAI${useResponsesApi ? ' (useResponsesApi)' : ''}: bindTools and invoke give tool_calls`, async () => {
      const answer = await chat().bindTools(tools, { tool_choice: 'weather' }).invoke('Weather in Oslo?');
      expect(answer.tool_calls?.length).toBeGreaterThanOrEqual(1);
      for (const call of answer.tool_calls!) {
        expect(call).toMatchObject({ name: 'weather' });
        expect(CITY.safeParse(call.args).success).toBe(true);
      }
    });

    it(`LangChain ChatOpenAI${useResponsesApi ? ' (useResponsesApi)' : ''}: stream gathers the tool call`, async () => {
      const gathered = new Map<number, { name: string; args: string }>();
      // A named tool: LangChain's Responses path (1.6.0) leaves tool_choice 'required' out of the request.
      for await (const chunk of await chat().bindTools(tools, { tool_choice: 'weather' }).stream('Weather?')) {
        for (const piece of chunk.tool_call_chunks ?? []) {
          const call = gathered.get(piece.index ?? 0) ?? { name: '', args: '' };
          call.name += piece.name ?? '';
          call.args += piece.args ?? '';
          gathered.set(piece.index ?? 0, call);
        }
      }
      expect(gathered.size).toBeGreaterThanOrEqual(1);
      for (const call of gathered.values()) {
        expect(call.name).toBe('weather');
        expect(argumentsOk(call.args)).toBe(true);
      }
    });
  }
});
