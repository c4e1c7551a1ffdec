import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allIdle, openaiClient, providerStatus, startInferencePlatform, type InferencePlatform } from './inference-test-kit.js';

/**
 * The gateway's own endpoints (health, status, routes), its model filter, tokenize and its error
 * answers, on a running platform over the embedded llama.cpp (`tiny`, context 512) and the OCR model.
 */
let running: InferencePlatform;
let baseUrl: string;

const PROVIDERS = ['provider_a', 'provider_b', 'provider_c', 'provider_d'];

beforeAll(async () => {
  running = await startInferencePlatform();
  baseUrl = running.platform.baseUrl;
}, 120_000);

afterAll(async () => {
  await running?.close();
});

const url = (path: string) => `${baseUrl}/inference/gateway${path}`;

async function getJson(path: string): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url(path));
  return { status: response.status, body: await response.json(), headers: response.headers };
}

async function postJson(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

function expectError(answer: { status: number; body: any }, status: number, code: string, param?: string | null): void {
  expect(answer.status).toBe(status);
  expect(answer.body.error).toMatchObject({ code, type: expect.any(String), message: expect.any(String) });
  if (param !== undefined) expect(answer.body.error.param).toBe(param);
}

describe('GET /v1/health', () => {
  it('answers 200 with every provider status', async () => {
    const { status, body } = await getJson('/v1/health');
    expect(status).toBe(200);
    expect(['ok', 'degraded']).toContain(body.status);
    expect(Object.keys(body.providers).sort()).toEqual(PROVIDERS);
    for (const id of PROVIDERS) expect(['operational', 'degraded']).toContain(body.providers[id]);
  });
});

describe('GET /v1/status', () => {
  it('lists every provider with in_flight, max_concurrency, models and engines', async () => {
    const { status, body } = await getJson('/v1/status');
    expect(status).toBe(200);
    expect(body.object).toBe('list');
    expect(body.data.map((p: { id: string }) => p.id)).toEqual(PROVIDERS);
    for (const provider of body.data) {
      expect(provider).toMatchObject({ name: expect.any(String), status: expect.any(String), in_flight: 0, cooling_down_until: null });
      expect(provider.max_concurrency).toBe(provider.id === 'provider_b' ? 3 : null);
      // tiny, the pipeline-check model and ocr-eng.
      expect(provider.models).toBeGreaterThanOrEqual(3);
      expect(provider.engines.map((e: { type: string }) => e.type)).toEqual(['llama', 'ocr']);
      for (const engine of provider.engines) expect(engine).toMatchObject({ available: true, ok: true });
    }
  });

  it('counts a request in flight only while it runs: completed calls leave every provider at 0', async () => {
    const gateway = openaiClient(baseUrl, '/inference/gateway');
    for (const provider of PROVIDERS) {
      await gateway.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2, provider } as never);
      const stream = await gateway.completions.create({ model: 'tiny', prompt: 'hi', max_tokens: 2, stream: true, provider } as never);
      for await (const _ of stream as unknown as AsyncIterable<unknown>) void _;
    }
    // Four calls more than provider_b's limit went through it in turn.
    for (let i = 0; i < 4; i++) await gateway.chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, provider: 'provider_b' } as never);
    const status = await providerStatus(baseUrl);
    for (const id of PROVIDERS) expect(status[id]!.in_flight).toBe(0);
    await allIdle(baseUrl, 0);
  });
});

describe('GET /v1/routes', () => {
  it('lists every gateway route from the route table', async () => {
    const { status, body } = await getJson('/v1/routes');
    expect(status).toBe(200);
    expect(body.object).toBe('list');
    const routes = body.data.map((r: { method: string; path: string }) => `${r.method} ${r.path}`).sort();
    expect(routes).toEqual(
      [
        'GET /v1/health',
        'GET /v1/models',
        'GET /v1/models/{id}',
        'POST /v1/responses',
        'GET /v1/responses/{id}',
        'DELETE /v1/responses/{id}',
        'GET /v1/responses/{id}/input_items',
        'POST /v1/responses/{id}/cancel',
        'GET /v1/routes',
        'GET /v1/status',
        'GET /v1/analytics',
        'GET /v1/recommendations',
        'POST /v1/chat/completions',
        'POST /v1/completions',
        'POST /v1/tokenize',
        'POST /v1/embeddings',
        'POST /v1/images/generations',
        'POST /v1/images/edits',
        'POST /v1/images/upscale',
      ].sort(),
    );
    for (const route of body.data) expect(route.summary.length).toBeGreaterThan(10);
  });

  it('lists only routes that answer', async () => {
    const { body } = await getJson('/v1/routes');
    for (const route of body.data as { method: string; path: string }[]) {
      // A path with a parameter is asked for an id that does not exist: its 404 is the resource's, not the URL's.
      const templated = route.path.includes('{');
      const response = await fetch(url(route.path.replace(/\{\w+\}/g, 'none')), { method: route.method, ...(route.method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {}) });
      const answer = await response.json();
      if (!templated) expect(response.status, route.path).not.toBe(404);
      if (response.status >= 400) expect(answer.error.code, route.path).not.toBe('unknown_url');
    }
  });
});

describe('GET /v1/models on the gateway', () => {
  it('lists every provider model, and ?provider= filters', async () => {
    const all = await getJson('/v1/models');
    expect(all.status).toBe(200);
    const ids = all.body.data.map((m: { id: string }) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['tiny', 'ocr-eng']));
    // Each listed once, with every provider serving it; the default provider first.
    const tiny = all.body.data.find((m: { id: string }) => m.id === 'tiny');
    expect(tiny.owned_by).toBe('provider_c');
    expect([...tiny.providers].sort()).toEqual(PROVIDERS);

    const onC = await getJson('/v1/models?provider=provider_c');
    expect(onC.status).toBe(200);
    expect(onC.body.data.length).toBeGreaterThan(0);
    for (const model of onC.body.data) {
      expect(model.owned_by).toBe('provider_c');
      expect(model.providers).toEqual(['provider_c']);
    }
    expect(onC.body.data.map((m: { id: string }) => m.id).sort()).toEqual([...ids].sort());
  });

  it('answers provider_d_image with an empty list (no image engine yet)', async () => {
    const { status, body } = await getJson('/v1/models?provider=provider_d_image');
    expect(status).toBe(200);
    expect(body).toEqual({ object: 'list', data: [] });
  });

  it('refuses an unknown provider with 422 invalid_provider, and an unknown query parameter with 400', async () => {
    expectError(await getJson('/v1/models?provider=nope'), 422, 'invalid_provider', 'provider');
    expectError(await getJson('/v1/models?available_on_current_plan=1'), 400, 'unknown_parameter', 'available_on_current_plan');
    const viaClient = await openaiClient(baseUrl, '/inference/gateway').models.list({ query: { provider: 'nope' } }).catch((e: unknown) => e);
    expect(viaClient).toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });
});

describe('POST /v1/tokenize', () => {
  const messages = [{ role: 'user', content: 'The quick brown fox' }];

  it('counts a prompt and chat messages: {count, max_model_len, tokens}', async () => {
    const prompt = await postJson('/v1/tokenize', { model: 'tiny', prompt: 'The quick brown fox' });
    expect(prompt.status).toBe(200);
    expect(Object.keys(prompt.body).sort()).toEqual(['count', 'max_model_len', 'tokens']);
    expect(prompt.body.count).toBe(prompt.body.tokens.length);
    expect(prompt.body.count).toBeGreaterThan(0);
    expect(prompt.body.max_model_len).toBe(512);
    for (const token of prompt.body.tokens) expect(Number.isInteger(token)).toBe(true);

    const chat = await postJson('/v1/tokenize', { model: 'tiny', messages });
    expect(chat.status).toBe(200);
    expect(chat.body.count).toBe(chat.body.tokens.length);
    // The chat template wraps the text in role markers.
    expect(chat.body.count).toBeGreaterThan(prompt.body.count);
  });

  it('counts what a generation is charged: prompt_tokens of the same messages and prompt', async () => {
    const gateway = openaiClient(baseUrl, '/inference/gateway');
    const chat = await postJson('/v1/tokenize', { model: 'tiny', messages });
    const completion = await gateway.chat.completions.create({ model: 'tiny', messages: messages as OpenAI.ChatCompletionMessageParam[], max_tokens: 1 });
    expect(completion.usage!.prompt_tokens).toBe(chat.body.count);
    const prompt = await postJson('/v1/tokenize', { model: 'tiny', prompt: 'The quick brown fox' });
    const raw = await gateway.completions.create({ model: 'tiny', prompt: 'The quick brown fox', max_tokens: 1 });
    expect(raw.usage!.prompt_tokens).toBe(prompt.body.count);
  });

  it('tokenizes on the provider named', async () => {
    const onB = await postJson('/v1/tokenize', { model: 'tiny', prompt: 'hello', provider: 'provider_b' });
    expect(onB.status).toBe(200);
    expectError(await postJson('/v1/tokenize', { model: 'tiny', prompt: 'hello', provider: 'nope' }), 422, 'invalid_provider', 'provider');
  });

  it('refuses both messages and prompt, or neither, with 400', async () => {
    const both = await postJson('/v1/tokenize', { model: 'tiny', prompt: 'x', messages });
    expectError(both, 400, 'missing_parameter', 'prompt');
    const neither = await postJson('/v1/tokenize', { model: 'tiny' });
    expectError(neither, 400, 'missing_parameter', 'messages');
  });

  it('answers an unknown model with 404 model_not_found', async () => {
    expectError(await postJson('/v1/tokenize', { model: 'nowhere', prompt: 'x' }), 404, 'model_not_found', 'model');
  });
});

describe('errors', () => {
  it('answers an unknown path, or a known one with another method, with 404 unknown_url', async () => {
    const unknown = await getJson('/v1/nothing-here');
    expectError(unknown, 404, 'unknown_url');
    expect(unknown.body.error.message).toContain('/v1/nothing-here');
    expectError(await getJson('/v1/chat/completions'), 404, 'unknown_url');
    expectError(await postJson('/v1/health', {}), 404, 'unknown_url');
    expectError(await postJson('/v2/chat/completions', { model: 'tiny' }), 404, 'unknown_url');
  });

  it('answers a body that is not JSON with 400 invalid_json', async () => {
    expectError(await postJson('/v1/chat/completions', '{"model": "tiny", "messages": ['), 400, 'invalid_json');
    expectError(await postJson('/v1/tokenize', 'not json at all'), 400, 'invalid_json');
  });

  it('answers an unknown parameter with 400 unknown_parameter naming it', async () => {
    const answer = await postJson('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'x' }], frobnicate: 3 });
    expectError(answer, 400, 'unknown_parameter', 'frobnicate');
    expect(answer.body.error.message).toContain('frobnicate');
    const nested = await postJson('/v1/completions', { model: 'tiny', prompt: 'x', stream_options: { include_usage: true, extra: 1 } });
    expectError(nested, 400, 'unknown_parameter', 'stream_options.extra');
    // The openai client sees a BadRequestError with the parameter.
    const viaClient = await openaiClient(baseUrl, '/inference/gateway')
      .chat.completions.create({ model: 'tiny', messages: [{ role: 'user', content: 'x' }], frobnicate: 3 } as never)
      .catch((e: unknown) => e);
    expect(viaClient).toBeInstanceOf(OpenAI.BadRequestError);
    expect((viaClient as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('frobnicate');
  });

  it('answers a value out of range with 422 on the gateway', async () => {
    expectError(await postJson('/v1/chat/completions', { model: 'tiny', messages: [{ role: 'user', content: 'x' }], temperature: 3 }), 422, 'invalid_value', 'temperature');
  });
});
