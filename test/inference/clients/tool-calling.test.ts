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
 * its arguments are checked against the tool's schema, not by value.
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
// The call's whole text fits: the random model's vocabulary is mostly single characters, and the
// wrapper {"name": …, "arguments": …} with its white space takes some 40 tokens before the city.
const CALL_TOKENS = 200;
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
      // The answer to the result is text; the embedded engine refuses 'auto', the default with tools.
      tool_choice: 'none',
      max_tokens: 8,
    });
    expect(second.usage!.completion_tokens).toBeGreaterThan(0);
  });

  it('openai: a streamed chat completion sends the call as tool_calls deltas', async () => {
    const stream = await client().chat.completions.create({ model, messages: [{ role: 'user', content: 'Weather?' }], tools: chatTools, tool_choice: 'required', max_tokens: CALL_TOKENS, stream: true });
    let name = '';
    let args = '';
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += delta.function?.name ?? '';
        args += delta.function?.arguments ?? '';
      }
    }
    expect(name).toBe('weather');
    expect(argumentsOk(args)).toBe(true);
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
      tool_choice: 'none',
      max_output_tokens: 8,
    });
    expect(second.usage!.output_tokens).toBeGreaterThan(0);
  });

  it('openai: a streamed response sends the function_call item and its argument deltas', async () => {
    const stream = await client().responses.create({ model, input: 'Weather?', tools: responseTools, tool_choice: 'required', max_output_tokens: CALL_TOKENS, stream: true });
    const types: string[] = [];
    let deltas = '';
    let done = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.function_call_arguments.delta') deltas += event.delta;
      if (event.type === 'response.function_call_arguments.done') done = event.arguments;
    }
    expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(types.at(-1)).toBe('response.completed');
    expect(types).toContain('response.output_item.done');
    expect(done).toBe(deltas);
    expect(argumentsOk(done)).toBe(true);
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
      expect(result.steps[0]!.toolCalls[0]).toMatchObject({ toolName: 'weather' });
      expect(calls).toHaveLength(1);
      expect(result.steps[0]!.toolResults[0]).toMatchObject({ toolName: 'weather', output: `3 °C in ${calls[0]}` });
    });

    it(`Vercel AI SDK over ${api}: streamText streams the tool call`, async () => {
      calls.length = 0;
      const result = streamText({ model: languageModel(), prompt: 'Weather?', tools: { weather }, toolChoice: 'required', stopWhen: stepCountIs(1), maxOutputTokens: CALL_TOKENS, maxRetries: 0 });
      const parts: string[] = [];
      for await (const part of result.fullStream) parts.push(part.type);
      expect(parts).toContain('tool-call');
      expect((await result.toolCalls)[0]).toMatchObject({ toolName: 'weather' });
      expect(calls).toHaveLength(1);
    });
  }

  for (const useResponsesApi of [false, true]) {
    const chat = () => new ChatOpenAI({ model, apiKey: keyOf(running, keyed), configuration: { baseURL: baseUrlOf(running, mount) }, maxTokens: CALL_TOKENS, temperature: 0, maxRetries: 0, useResponsesApi });
    const tools = [{ type: 'function' as const, function: { name: 'weather', description: 'The weather in a city', parameters: PARAMETERS } }];

    it(`LangChain ChatOpenAI${useResponsesApi ? ' (useResponsesApi)' : ''}: bindTools and invoke give tool_calls`, async () => {
      const answer = await chat().bindTools(tools, { tool_choice: 'weather' }).invoke('Weather in Oslo?');
      expect(answer.tool_calls?.[0]).toMatchObject({ name: 'weather' });
      expect(CITY.safeParse(answer.tool_calls![0]!.args).success).toBe(true);
    });

    it(`LangChain ChatOpenAI${useResponsesApi ? ' (useResponsesApi)' : ''}: stream gathers the tool call`, async () => {
      let name = '';
      let args = '';
      // A named tool: LangChain's Responses path (1.6.0) leaves tool_choice 'required' out of the request.
      for await (const chunk of await chat().bindTools(tools, { tool_choice: 'weather' }).stream('Weather?')) {
        for (const piece of chunk.tool_call_chunks ?? []) {
          name += piece.name ?? '';
          args += piece.args ?? '';
        }
      }
      expect(name).toBe('weather');
      expect(argumentsOk(args)).toBe(true);
    });
  }
});
