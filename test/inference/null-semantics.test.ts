import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import type { TestPlatform } from '../support/platform-harness.js';
import { everyMount, loopbackEngines, startUpstreamPlatform } from './inference-test-kit.js';
import { lastGeneration } from './upstream-behaviour.js';

/**
 * OpenAI's null semantics with raw HTTP bodies on the four mounts: an optional field sent as null
 * is absent (as OpenAI and vLLM read it), a required one sent as null is still missing.
 */
let platform: TestPlatform;
let vllm: LoopbackOpenAiServer;
let textKey: string;
const MODEL = 'vllm-model';

beforeAll(async () => {
  vllm = await LoopbackOpenAiServer.start('vllm', [{ id: MODEL, contextLength: 4096 }]);
  ({ platform, textKey } = await startUpstreamPlatform({
    providers: [{ id: 'provider_a', name: 'A', engines: loopbackEngines(vllm.url, 'vllm', { tools: true }) }],
    interfaces: everyMount(['provider_a']),
  }));
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await vllm?.close();
});

const NULLS = {
  temperature: null,
  top_p: null,
  max_tokens: null,
  stop: null,
  seed: null,
  user: null,
  stream: null,
  stream_options: null,
  n: null,
  presence_penalty: null,
  frequency_penalty: null,
};

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', key: () => textKey },
  { name: 'Service I', mount: '/inference/image', key: () => textKey },
  { name: 'the proxy', mount: '/inference/proxy', key: () => 'ignored' },
  { name: 'the gateway', mount: '/inference/gateway', key: () => 'ignored' },
];

describe.each(MOUNTS)('$name', ({ mount, key }) => {
  const post = (path: string, body: unknown) =>
    fetch(`${platform.baseUrl}${mount}/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key()}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('reads null optional fields of a chat body as absent, tools and tool_choice included, and sends none of them upstream', async () => {
    const res = await post('/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'Hi', name: null }], ...NULLS, tools: null, tool_choice: null, parallel_tool_calls: null, response_format: null });
    expect(res.status).toBe(200);
    expect((await res.json()).choices[0].message.content).toBe('Hello, loopback world.');
    const sent = lastGeneration(vllm).body;
    for (const field of ['temperature', 'top_p', 'max_tokens', 'stop', 'seed', 'tools', 'tool_choice', 'response_format']) expect(sent).not.toHaveProperty(field);
  });

  it('reads null optional fields of a completions body as absent', async () => {
    const res = await post('/completions', { model: MODEL, prompt: 'Once', ...NULLS });
    expect(res.status).toBe(200);
    expect((await res.json()).choices[0].text).toBe('Hello, loopback world.');
  });

  it('accepts an assistant turn with content null when it carries tool_calls', async () => {
    const call = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const res = await post('/chat/completions', { model: MODEL, messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }] });
    expect(res.status).toBe(200);
  });

  it('still refuses a null model and an assistant turn with content null and no tool_calls', async () => {
    const noModel = await post('/chat/completions', { model: null, messages: [{ role: 'user', content: 'Hi' }] });
    expect(noModel.status).toBeGreaterThanOrEqual(400);
    expect(noModel.status).toBeLessThan(500);
    expect((await noModel.json()).error.param).toBe('model');
    const empty = await post('/chat/completions', { model: MODEL, messages: [{ role: 'assistant', content: null }] });
    expect(empty.status).toBeGreaterThanOrEqual(400);
    expect(empty.status).toBeLessThan(500);
  });
});

it('reads a null prompt of tokenize as absent', async () => {
  const res = await fetch(`${platform.baseUrl}/inference/gateway/v1/tokenize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hi' }], prompt: null, provider: null }),
  });
  expect(res.status).toBe(200);
});
