import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import type { TestPlatform } from '../support/platform-harness.js';
import { everyMount, loopbackEngines, startUpstreamPlatform } from './inference-test-kit.js';
import { lastGeneration } from './upstream-behaviour.js';

/**
 * Tool calling on chat completions, with the official openai client on the four mounts over a
 * loopback vLLM-format upstream that serves tools (provider_a, config tools: true) and one that
 * does not (provider_b): the calls come back as OpenAI's tool_calls, streamed as its deltas, and a
 * second turn reaches the upstream in vLLM's (OpenAI's) format.
 */
let platform: TestPlatform;
let vllm: LoopbackOpenAiServer;
let plain: LoopbackOpenAiServer;
let textKey: string;

const MODEL = 'vllm-tools';
const PLAIN_MODEL = 'vllm-plain';
const WEATHER = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

beforeAll(async () => {
  [vllm, plain] = await Promise.all([
    LoopbackOpenAiServer.start('vllm', [{ id: MODEL, contextLength: 4096 }]),
    LoopbackOpenAiServer.start('vllm', [{ id: PLAIN_MODEL, contextLength: 4096 }]),
  ]);
  ({ platform, textKey } = await startUpstreamPlatform({
    providers: [
      { id: 'provider_a', name: 'A', engines: loopbackEngines(vllm.url, 'vllm', { tools: true }) },
      { id: 'provider_b', name: 'B', engines: loopbackEngines(plain.url, 'vllm') },
    ],
    interfaces: everyMount(['provider_a', 'provider_b']),
  }));
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await Promise.all([vllm?.close(), plain?.close()]);
});

afterEach(() => {
  vllm.reset();
  plain.reset();
});

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', key: () => textKey, refused: 422 },
  { name: 'Service I', mount: '/inference/image', key: () => textKey, refused: 400 },
  { name: 'the proxy', mount: '/inference/proxy', key: () => 'ignored', refused: 400 },
  { name: 'the gateway', mount: '/inference/gateway', key: () => 'ignored', refused: 422 },
];

describe.each(MOUNTS)('$name', ({ mount, key, refused }) => {
  const client = () => new OpenAI({ baseURL: `${platform.baseUrl}${mount}/v1`, apiKey: key(), maxRetries: 0 });

  it('answers tools with tool_choice required with the upstream tool_calls, content null and finish_reason tool_calls', async () => {
    vllm.behaviour.toolCalls = [{ name: 'get_weather', arguments: ['{"city":', ' "Paris"}'] }];
    const done = await client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [WEATHER], tool_choice: 'required', parallel_tool_calls: false });
    const choice = done.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([{ id: 'chatcmpl-tool-loop0', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }]);
    expect(done.usage).toMatchObject({ prompt_tokens: vllm.lastUsage!.prompt_tokens, completion_tokens: vllm.lastUsage!.completion_tokens });
    expect(lastGeneration(vllm).body).toMatchObject({ model: MODEL, tools: [WEATHER], tool_choice: 'required', parallel_tool_calls: false });
  });

  it('streams OpenAI tool_calls deltas that the client reassembles, ending with finish_reason tool_calls', async () => {
    vllm.behaviour.toolCalls = [{ name: 'get_weather', arguments: ['{"ci', 'ty": "Os', 'lo"}'] }];
    const stream = client().chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'Weather in Oslo?' }], tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    const deltas: unknown[] = [];
    for await (const chunk of stream) for (const call of chunk.choices[0]?.delta.tool_calls ?? []) deltas.push(call);
    const final = await stream.finalChatCompletion();
    expect(deltas[0]).toEqual({ index: 0, id: 'chatcmpl-tool-loop0', type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(deltas.slice(1)).toEqual(['{"ci', 'ty": "Os', 'lo"}'].map((piece) => ({ index: 0, function: { arguments: piece } })));
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(final.choices[0]!.message.tool_calls).toEqual([{ id: 'chatcmpl-tool-loop0', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } }]);
    expect(lastGeneration(vllm).body).toMatchObject({ tool_choice: { type: 'function', function: { name: 'get_weather' } } });
  });

  it('passes the second turn (assistant tool_calls with content null, then the tool result) to the upstream in vLLM format', async () => {
    const call = { id: 'chatcmpl-tool-abc', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
    const done = await client().chat.completions.create({
      model: MODEL,
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'chatcmpl-tool-abc', content: '18 C, sunny' },
      ],
      tools: [WEATHER],
    });
    expect(done.choices[0]!.message.content).toBe('Hello, loopback world.');
    expect(lastGeneration(vllm).body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', content: '18 C, sunny', tool_call_id: 'chatcmpl-tool-abc' },
    ]);
  });

  it('gets the stand-in model own calls: the named tool with arguments from its schema, and with auto the tool the user names', async () => {
    const named = await client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Go' }], tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    expect(named.choices[0]!.message.tool_calls).toEqual([{ id: 'chatcmpl-tool-loop0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"loop"}' } }]);
    const auto = await client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Use get_weather please' }], tools: [WEATHER] });
    expect(auto.choices[0]!.finish_reason).toBe('tool_calls');
    const text = await client().chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Just say hello' }], tools: [WEATHER] });
    expect(text.choices[0]!.message).toMatchObject({ content: 'Hello, loopback world.' });
    expect(text.choices[0]!.finish_reason).toBe('stop');
  });

  it('refuses tools for a model that cannot call them, naming tools, without asking the upstream', async () => {
    const error = await client()
      .chat.completions.create({ model: PLAIN_MODEL, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(refused);
    expect((error as InstanceType<typeof OpenAI.APIError>).param).toBe('tools');
    expect(plain.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  // vLLM's /tokenize takes tools, so the count is the prompt a chat call with them sees.
  it('counts tokens with tools: the upstream tokenize gets them in its own format; a model that cannot call them, or a prompt, is refused naming tools', async () => {
    const post = (body: Record<string, unknown>) =>
      fetch(`${platform.baseUrl}${mount}/v1/tokenize`, { method: 'POST', headers: { authorization: `Bearer ${key()}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const counted = await post({ model: MODEL, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER] });
    expect(counted.status).toBe(200);
    expect(vllm.requests.filter((r) => r.path === '/tokenize').at(-1)?.body).toEqual({ model: MODEL, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER] });
    const plainCount = await post({ model: PLAIN_MODEL, messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER] });
    expect(plainCount.status).toBe(refused);
    expect((await plainCount.json()).error).toMatchObject({ code: 'unsupported_parameter', param: 'tools' });
    expect(plain.requests.filter((r) => r.method === 'POST')).toEqual([]);
    const withPrompt = await post({ model: MODEL, prompt: 'Weather?', tools: [WEATHER] });
    expect(withPrompt.status).toBe(refused);
    expect((await withPrompt.json()).error).toMatchObject({ param: 'tools' });
  });

  it('refuses tools on completions as an unknown parameter', async () => {
    const res = await fetch(`${platform.baseUrl}${mount}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, prompt: 'Once', tools: [WEATHER] }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'unknown_parameter', param: 'tools' });
  });

  it('refuses a tool_choice naming a function that is not among the tools, naming tool_choice', async () => {
    const error = await client()
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], tools: [WEATHER], tool_choice: { type: 'function', function: { name: 'nope' } } })
      .catch((e: unknown) => e);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(refused);
    expect((error as InstanceType<typeof OpenAI.APIError>).param).toMatch(/^tool_choice/);
  });
});
