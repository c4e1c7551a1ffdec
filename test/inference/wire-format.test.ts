import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llamaInferenceConfig, modelsReady } from '../support/inference-config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';
import { sseData } from './upstream-behaviour.js';
import { DEFAULT_JSON_MAX_DEPTH } from '../../core/json-depth.js';

/**
 * The exact wire shapes, read with fetch rather than the openai SDK (which forgives a lot):
 * chat.completion and text_completion objects, their server-sent-event streams, and the error
 * body with each interface's status.
 */
let platform: TestPlatform;
let modelsDir: string;
let textKey: string;

const MODEL = 'tiny';

beforeAll(async () => {
  const built = await llamaInferenceConfig();
  modelsDir = built.modelsDir;
  platform = await startTestPlatform({ inference: built.config });
  textKey = await platform.issueKey('acme', 'text');
  await modelsReady(platform.baseUrl);
}, 120_000);

afterAll(async () => {
  await platform?.close();
  if (modelsDir) await rm(modelsDir, { recursive: true, force: true });
});

const MOUNTS = {
  serviceT: { mount: '/inference/text', key: () => textKey },
  serviceI: { mount: '/inference/image', key: () => textKey },
  gateway: { mount: '/inference/gateway', key: () => undefined },
} as const;

type Mount = keyof typeof MOUNTS;

async function post(mount: Mount, path: string, body: unknown): Promise<{ status: number; type: string | null; text: string; json: () => Record<string, unknown> }> {
  const { mount: base, key } = MOUNTS[mount];
  const k = key();
  const response = await fetch(`${platform.baseUrl}${base}/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(k ? { authorization: `Bearer ${k}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type'), text, json: () => JSON.parse(text) as Record<string, unknown> };
}

const messages = [{ role: 'user', content: 'hello' }];
const base = { model: MODEL, messages, max_tokens: 6, seed: 9, temperature: 0 };

type Chunk = { id: string; object: string; created: number; model: string; choices: Record<string, unknown>[]; usage?: unknown };

function chunksOf(text: string): { chunks: Chunk[]; done: boolean } {
  // Every event is exactly `data: <one line>` and a blank line; nothing else is on the wire.
  expect(text).toMatch(/^(data: [^\n]+\n\n)+$/);
  const events = sseData(text);
  expect(events.filter((e) => e === '[DONE]')).toHaveLength(1);
  return { chunks: events.slice(0, -1).map((e) => JSON.parse(e) as Chunk), done: events.at(-1) === '[DONE]' };
}

function expectCompletionId(id: unknown, prefix: 'chatcmpl' | 'cmpl') {
  expect(id).toMatch(new RegExp(`^${prefix}-[A-Za-z0-9]{16,}$`));
}

function expectCreated(created: unknown) {
  expect(Number.isInteger(created)).toBe(true);
  expect(Math.abs((created as number) - Date.now() / 1000)).toBeLessThan(120);
}

describe('chat.completion', () => {
  it('has OpenAI’s exact shape, usage totals adding up', async () => {
    const answer = await post('serviceT', '/chat/completions', base);
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^application\/json/);
    const body = answer.json();
    expect(Object.keys(body).sort()).toEqual(['choices', 'created', 'id', 'model', 'object', 'usage']);
    expectCompletionId(body.id, 'chatcmpl');
    expectCreated(body.created);
    expect(body).toMatchObject({ object: 'chat.completion', model: MODEL });
    const choices = body.choices as Record<string, unknown>[];
    expect(choices).toHaveLength(1);
    expect(choices[0]).toEqual({ index: 0, message: { role: 'assistant', content: expect.any(String), refusal: null }, logprobs: null, finish_reason: 'length' });
    const usage = body.usage as Record<string, number>;
    expect(Object.keys(usage).sort()).toEqual(['completion_tokens', 'prompt_tokens', 'total_tokens']);
    expect(usage.completion_tokens).toBe(6);
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    const again = (await post('serviceT', '/chat/completions', base)).json();
    expect(again.id).not.toBe(body.id);
  });

  it('streams `data: {json}` events ending with [DONE]: role first, finish_reason last with an empty delta, no usage unasked', async () => {
    const whole = (await post('gateway', '/chat/completions', base)).json();
    const answer = await post('gateway', '/chat/completions', { ...base, stream: true });
    expect(answer.status).toBe(200);
    expect(answer.type).toMatch(/^text\/event-stream/);
    const { chunks, done } = chunksOf(answer.text);
    expect(done).toBe(true);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    const [first] = chunks;
    expectCompletionId(first!.id, 'chatcmpl');
    expectCreated(first!.created);
    for (const chunk of chunks) {
      expect(Object.keys(chunk).sort()).toEqual(['choices', 'created', 'id', 'model', 'object']);
      expect(chunk).toMatchObject({ id: first!.id, created: first!.created, object: 'chat.completion.chunk', model: MODEL });
      expect(chunk.choices).toHaveLength(1);
    }
    expect(first!.choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null });
    expect(chunks.at(-1)!.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'length' });
    const middle = chunks.slice(1, -1);
    for (const chunk of middle) {
      expect(chunk.choices[0]).toEqual({ index: 0, delta: { content: expect.any(String) }, logprobs: null, finish_reason: null });
      expect(chunk.choices[0]!.delta).not.toHaveProperty('role');
    }
    const text = middle.map((chunk) => (chunk.choices[0]!.delta as { content: string }).content).join('');
    expect(text).toBe(((whole.choices as { message: { content: string } }[])[0]!).message.content);
  });

  it('with include_usage every chunk carries usage: null and a final chunk with no choices carries the usage', async () => {
    const whole = (await post('serviceI', '/chat/completions', base)).json();
    const answer = await post('serviceI', '/chat/completions', { ...base, stream: true, stream_options: { include_usage: true } });
    const { chunks } = chunksOf(answer.text);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual(whole.usage);
    const rest = chunks.slice(0, -1);
    for (const chunk of rest) {
      expect(chunk).toHaveProperty('usage', null);
      expect(chunk.choices).toHaveLength(1);
    }
    expect(rest.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: 'length' });
    expect(last).toMatchObject({ id: rest[0]!.id, object: 'chat.completion.chunk', created: rest[0]!.created });
  });
});

describe('text_completion', () => {
  it('has OpenAI’s shape on /v1/completions', async () => {
    const answer = await post('serviceT', '/completions', { model: MODEL, prompt: 'Once upon', max_tokens: 4, seed: 2, temperature: 0 });
    expect(answer.status).toBe(200);
    const body = answer.json();
    expect(Object.keys(body).sort()).toEqual(['choices', 'created', 'id', 'model', 'object', 'usage']);
    expectCompletionId(body.id, 'cmpl');
    expectCreated(body.created);
    expect(body).toMatchObject({ object: 'text_completion', model: MODEL });
    expect(body.choices).toEqual([{ index: 0, text: expect.any(String), logprobs: null, finish_reason: 'length' }]);
    const usage = body.usage as Record<string, number>;
    expect(usage.completion_tokens).toBe(4);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it('streams text_completion chunks, the last with finish_reason, then the usage chunk when asked', async () => {
    const request = { model: MODEL, prompt: 'Once upon', max_tokens: 4, seed: 2, temperature: 0 };
    const whole = (await post('gateway', '/completions', request)).json();
    const answer = await post('gateway', '/completions', { ...request, stream: true, stream_options: { include_usage: true } });
    expect(answer.type).toMatch(/^text\/event-stream/);
    const { chunks } = chunksOf(answer.text);
    expectCompletionId(chunks[0]!.id, 'cmpl');
    for (const chunk of chunks) expect(chunk).toMatchObject({ object: 'text_completion', id: chunks[0]!.id });
    const usage = chunks.at(-1)!;
    expect(usage).toMatchObject({ choices: [], usage: whole.usage });
    const pieces = chunks.slice(0, -1);
    expect(pieces.at(-1)!.choices[0]).toEqual({ index: 0, text: '', logprobs: null, finish_reason: 'length' });
    for (const chunk of pieces.slice(0, -1)) expect(chunk.choices[0]).toEqual({ index: 0, text: expect.any(String), logprobs: null, finish_reason: null });
    expect(pieces.map((chunk) => chunk.choices[0]!.text).join('')).toBe((whole.choices as { text: string }[])[0]!.text);
  });
});

describe('errors', () => {
  function expectError(answer: { status: number; type: string | null; json: () => Record<string, unknown> }, status: number, code: string, param: string | null) {
    expect(answer.status).toBe(status);
    expect(answer.type).toMatch(/^application\/json/);
    const body = answer.json();
    expect(Object.keys(body)).toEqual(['error']);
    const error = body.error as Record<string, unknown>;
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(error).toMatchObject({ code, param, type: status >= 500 ? 'server_error' : status === 403 ? 'permission_error' : status === 429 ? 'rate_limit_error' : 'invalid_request_error' });
    expect(typeof error.message).toBe('string');
    expect((error.message as string).length).toBeGreaterThan(10);
    return error;
  }

  it('Service T: a missing model is 400 missing_parameter naming model', async () => {
    const error = expectError(await post('serviceT', '/chat/completions', { messages }), 400, 'missing_parameter', 'model');
    expect(error.message).toContain('model');
  });

  it('a message without content is 400 missing_parameter naming it, content of the wrong type 422', async () => {
    expectError(await post('serviceT', '/chat/completions', { ...base, messages: [{ role: 'user' }] }), 400, 'missing_parameter', 'messages[0].content');
    expectError(await post('serviceI', '/chat/completions', { ...base, messages: [{ role: 'user' }] }), 400, 'missing_parameter', 'messages[0].content');
    expectError(await post('serviceT', '/chat/completions', { ...base, messages: [{ role: 'user', content: 42 }] }), 422, 'invalid_type', 'messages[0].content');
  });

  it('a temperature of the wrong type is 422 invalid_type on Service T and the gateway, 400 on Service I', async () => {
    expectError(await post('serviceT', '/chat/completions', { ...base, temperature: 'hot' }), 422, 'invalid_type', 'temperature');
    expectError(await post('gateway', '/chat/completions', { ...base, temperature: 'hot' }), 422, 'invalid_type', 'temperature');
    expectError(await post('serviceI', '/chat/completions', { ...base, temperature: 'hot' }), 400, 'invalid_type', 'temperature');
  });

  it('n above 16 or below 1 is refused, n: 2 taken (choices.test.ts covers the answers)', async () => {
    expectError(await post('serviceT', '/chat/completions', { ...base, n: 17 }), 422, 'invalid_value', 'n');
    expectError(await post('serviceI', '/completions', { model: MODEL, prompt: 'x', n: 0 }), 400, 'invalid_value', 'n');
    expect((await post('serviceT', '/chat/completions', { ...base, n: 2 })).status).toBe(200);
  });

  it('an unknown parameter, a malformed body and stream_options without stream are 400', async () => {
    expectError(await post('serviceT', '/chat/completions', { ...base, logit_bias: {} }), 400, 'unknown_parameter', 'logit_bias');
    expectError(await post('gateway', '/chat/completions', '{"model": "tiny", '), 400, 'invalid_json', null);
    expectError(await post('serviceI', '/chat/completions', [base]), 400, 'invalid_body', null);
    expectError(await post('serviceI', '/chat/completions', { ...base, stream_options: { include_usage: true } }), 400, 'invalid_value', 'stream_options');
  });

  it('a body nested past JSON_MAX_DEPTH is 400 invalid_body on every interface; one inside it is validated as usual', async () => {
    // As text: the bodies nest deeper than JSON.stringify itself can go.
    const deep = (depth: number) => `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;
    const chat = (name: string) => `${JSON.stringify(base).slice(0, -1)}, "name": ${name}}`;
    for (const iface of ['serviceT', 'serviceI', 'gateway'] as const) {
      expectError(await post(iface, '/chat/completions', chat(deep(5_000))), 400, 'invalid_body', null);
    }
    expectError(await post('serviceI', '/completions', deep(50_000)), 400, 'invalid_body', null);
    // Below the limit the body is validated as usual: an unknown parameter, however deep its value.
    expectError(await post('serviceT', '/chat/completions', chat(deep(DEFAULT_JSON_MAX_DEPTH - 2))), 400, 'unknown_parameter', 'name');
    expectError(await post('serviceT', '/chat/completions', chat(deep(DEFAULT_JSON_MAX_DEPTH))), 400, 'invalid_body', null);
  });

  it('an unknown model is 404 model_not_found naming model; an unknown path 404', async () => {
    expectError(await post('gateway', '/chat/completions', { ...base, model: 'nowhere' }), 404, 'model_not_found', 'model');
    const unknown = await post('gateway', '/chat/nothing', base);
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({ error: { code: 'unknown_url', type: 'invalid_request_error' } });
  });

  it('a refusal on a streaming request is an error status, not a stream', async () => {
    const answer = await post('serviceI', '/chat/completions', { ...base, stream: true, mirostat: 2 });
    expectError(answer, 400, 'unsupported_parameter', 'mirostat');
    expect(answer.type).not.toMatch(/event-stream/);
  });
});
