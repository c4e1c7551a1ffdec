import OpenAI from 'openai';
import pg from 'pg';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inferenceConfigFrom } from '../../subgraphs/inference/config/load-inference-config.js';
import { freePort } from '../support/free-port.js';
import { LoopbackOpenAiServer } from '../support/loopback-openai-server.js';
import { LOOPBACK_CHECKPOINTS, LoopbackSdWebuiServer } from '../support/loopback-sdwebui-server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';
import { waitFor } from './inference-test-kit.js';
import { listingOnlyServer, onGenerationOnly } from './upstream-behaviour.js';

/**
 * What the platform says of its upstreams, over loopback stand-ins: provider_a and provider_b are
 * vLLM servers, provider_c one that goes away after it was listed, provider_d a Stable-Diffusion
 * WebUI, provider_e an upstream never reached. Failures are answered with the interface's status
 * (503 with Retry-After while an upstream is down, never a 404 a client takes for good), every
 * attempt is recorded under its provider, image models are listed and recommended, the upstream's
 * own words go to the log, and a stream starts as soon as a provider has the request.
 */
let platform: TestPlatform;
let a: LoopbackOpenAiServer;
let b: LoopbackOpenAiServer;
let webui: LoopbackSdWebuiServer;
let goneListing: { close(): Promise<void> } | undefined;
let db: pg.Client;
let textKey: string;
let imageKey: string;
const logs: Record<string, unknown>[] = [];

// Words an upstream might say that must reach the log and never a client.
const LEAKY = 'CUDA out of memory on 10.9.8.7 for prompt "my password"';
const CHECKPOINTS = LOOPBACK_CHECKPOINTS.map((c) => c.model_name);

beforeAll(async () => {
  [a, b, webui] = await Promise.all([
    LoopbackOpenAiServer.start('vllm', [
      { id: 'a-model', contextLength: 4096 },
      { id: 'shared-model', contextLength: 4096 },
    ]),
    LoopbackOpenAiServer.start('vllm', [
      { id: 'shared-model', contextLength: 4096 },
      { id: 'flaky-model', contextLength: 4096 },
    ]),
    LoopbackSdWebuiServer.start(),
  ]);
  const gonePort = await freePort();
  goneListing = await listingOnlyServer(gonePort, 'c-model');
  const neverPort = await freePort();
  const upstream = (url: string) => [{ type: 'openai-upstream', url, flavour: 'vllm', timeouts: { connectMs: 2_000 } }];
  const config = inferenceConfigFrom(
    {
      providers: [
        { id: 'provider_a', name: 'A', engines: upstream(a.url) },
        { id: 'provider_b', name: 'B', engines: upstream(b.url) },
        { id: 'provider_c', name: 'C', engines: upstream(`http://127.0.0.1:${gonePort}`) },
        { id: 'provider_d', name: 'D', engines: [{ type: 'sd-webui', url: webui.url }] },
        { id: 'provider_e', name: 'E', engines: upstream(`http://127.0.0.1:${neverPort}`) },
      ],
      interfaces: {
        serviceT: { providers: ['provider_a'] },
        serviceI: { providers: ['provider_a', 'provider_d'] },
        proxy: { providers: ['provider_a', 'provider_d'] },
        gateway: { providers: ['provider_a', 'provider_b', 'provider_c', 'provider_d', 'provider_e'], defaultProvider: 'provider_a', imageListingProvider: 'provider_d' },
      },
    },
    null,
  );
  platform = await startTestPlatform({ inference: config }, { level: 'info', destination: { write: (line: string) => void logs.push(JSON.parse(line)) } });
  [textKey, imageKey] = await Promise.all([platform.issueKey('acme', 'text'), platform.issueKey('acme', 'image')]);
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
}, 60_000);

afterAll(async () => {
  await db?.end();
  await platform?.close();
  await goneListing?.close();
  await Promise.all([a?.close(), b?.close(), webui?.close()]);
});

afterEach(() => {
  a.reset();
  b.reset();
  webui.reset();
});

const gateway = (path: string, json?: unknown) => platform.request(`/inference/gateway${path}`, json === undefined ? {} : { method: 'POST', json });
const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'Hello' }], ...extra });
const errorOf = async (response: Response) => ((await response.json()) as { error: { code: string; param: string | null; message: string } }).error;

/** The usage records of a model, once `count` of them are written (the recorder writes in batches). */
async function recordsOf(model: string, count: number): Promise<{ provider: string; status: number; error_code: string | null }[]> {
  return waitFor(`${count} usage records of ${model}`, async () => {
    const { rows } = await db.query(`select provider, status, error_code from inference.usage_record where model = $1 order by occurred_at, status`, [model]);
    return rows.length >= count ? rows : undefined;
  });
}

type Listed = { id: string; owned_by: string; status: string; output_modalities?: string[] };

async function listing(query = '', mount = '/inference/gateway', key?: string): Promise<Listed[]> {
  const response = await platform.request(`${mount}/v1/models${query}`, key ? { key } : {});
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Listed[] }).data;
}

describe('the upstream’s own words', () => {
  it('go to the log when it fails, and the client gets ours', async () => {
    onGenerationOnly(b, { fail: { status: 500, message: LEAKY, type: 'InternalServerError' } });
    const response = await gateway('/v1/chat/completions', chat('flaky-model', { provider: 'provider_b' }));
    expect(response.status).toBe(502);
    const text = await response.text();
    expect(text).not.toContain('CUDA');
    expect(text).not.toContain('10.9.8.7');
    const logged = logs.find((line) => line.msg === 'upstream engine refused' && JSON.stringify(line).includes('CUDA out of memory'));
    expect(logged).toMatchObject({ level: 40, status: 500 });
  });
});

describe('usage analytics', () => {
  it('record every attempt under its provider, the one retried elsewhere included', async () => {
    onGenerationOnly(a, { fail: { status: 500, message: 'boom', type: 'InternalServerError' } });
    const response = await gateway('/v1/chat/completions', chat('shared-model'));
    expect(response.status).toBe(200);
    expect(await recordsOf('shared-model', 2)).toEqual([
      { provider: 'provider_b', status: 200, error_code: null },
      { provider: 'provider_a', status: 502, error_code: 'upstream_error' },
    ]);
  });

  it('show the errors of a provider answering 500s, in the records and the recommendations', async () => {
    onGenerationOnly(b, { fail: { status: 500, message: 'boom', type: 'InternalServerError' } });
    for (let i = 0; i < 5; i++) expect((await gateway('/v1/chat/completions', chat('flaky-model'))).status).toBe(502);
    const records = await recordsOf('flaky-model', 6);
    expect(records.every((r) => r.provider === 'provider_b' && r.status === 502)).toBe(true);
    const answer = (await (await gateway('/v1/recommendations?category=chat')).json()) as { data: { recommendations: { provider: string; model: string; why: { measured: boolean; error_rate: number | null } }[] }[] };
    const flaky = answer.data[0]!.recommendations.find((r) => r.provider === 'provider_b' && r.model === 'flaky-model');
    expect(flaky?.why).toMatchObject({ measured: true, error_rate: 1 });
  });
});

describe('an upstream that is down', () => {
  it('keeps its models listed with their status, and answers 503 with Retry-After, never 404', async () => {
    expect((await listing('?provider=provider_c')).map((m) => [m.id, m.status])).toEqual([['c-model', 'ready']]);
    await goneListing!.close();
    goneListing = undefined;
    for (let i = 0; i < 2; i++) {
      const response = await gateway('/v1/chat/completions', chat('c-model'));
      expect(response.status, `call ${i}`).toBe(503);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await errorOf(response)).toMatchObject({ code: 'service_unavailable' });
      // Listed again after a failed call: the same model, marked unavailable.
      expect((await listing('?provider=provider_c')).map((m) => [m.id, m.status])).toEqual([['c-model', 'unavailable']]);
    }
    expect((await listing()).find((m) => m.id === 'c-model')).toMatchObject({ owned_by: 'provider_c', status: 'unavailable' });
  });

  it('answers 503 for a model a provider never reached may serve, and 404 where every provider answered', async () => {
    const unknown = await gateway('/v1/chat/completions', chat('e-model', { provider: 'provider_e' }));
    expect(unknown.status).toBe(503);
    expect(unknown.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await errorOf(unknown)).toMatchObject({ code: 'service_unavailable' });
    const missing = await gateway('/v1/chat/completions', chat('e-model', { provider: 'provider_a' }));
    expect(missing.status).toBe(404);
    expect(await errorOf(missing)).toMatchObject({ code: 'model_not_found', param: 'model' });
  });
});

describe('image models', () => {
  it('are listed on the gateway with their provider, on their own with provider_d_image', async () => {
    const all = await listing();
    for (const id of CHECKPOINTS) expect(all.find((m) => m.id === id)).toMatchObject({ owned_by: 'provider_d', status: 'ready', output_modalities: ['image'] });
    expect(all.find((m) => m.id === 'a-model')).toMatchObject({ output_modalities: ['text'] });
    expect((await listing('?provider=provider_d_image')).map((m) => m.id)).toEqual(CHECKPOINTS);
    expect((await listing('?provider=provider_d')).map((m) => m.id)).toEqual(CHECKPOINTS);
    expect((await listing('?provider=provider_a')).map((m) => m.id)).toEqual(['a-model', 'shared-model']);
    // Service T and Service I's text listing are text models.
    expect((await listing('', '/inference/text', textKey)).map((m) => m.id)).toEqual(['a-model', 'shared-model']);
  });

  it('are recommended for image generation, the upscalers for upscaling', async () => {
    const answer = (await (await gateway('/v1/recommendations')).json()) as { data: { category: string; note: string | null; recommendations: { provider: string; model: string }[] }[] };
    const of = (category: string) => answer.data.find((c) => c.category === category)!;
    expect(of('image').recommendations.map((r) => [r.provider, r.model]).sort()).toEqual(CHECKPOINTS.map((id) => ['provider_d', id]).sort());
    const upscalers = of('upscale').recommendations.map((r) => r.model);
    expect(upscalers).toEqual(expect.arrayContaining(['ESRGAN_4x', 'R-ESRGAN 4x+', 'Lanczos', 'Nearest']));
    expect(upscalers).not.toContain('None');
    expect(of('upscale').recommendations.every((r) => r.provider === 'provider_d')).toBe(true);
    for (const category of ['image', 'upscale']) expect(of(category).note ?? '').not.toMatch(/not implemented/);
  });
});

describe('Service I and the image paths', () => {
  it('answers an unknown path 404 whatever the key, and still refuses a key of the other kind on a known one', async () => {
    for (const key of [textKey, imageKey]) {
      for (const [method, path] of [['GET', '/v1/nothing-here'], ['POST', '/v1/unknown'], ['GET', '/sdapi/v1/nothing']] as const) {
        const response = await platform.request(`/inference/image${path}`, { method, key, ...(method === 'POST' ? { json: {} } : {}) });
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(await errorOf(response)).toMatchObject({ code: 'unknown_url' });
      }
    }
    expect((await platform.request('/inference/image/v1/nothing-here')).status).toBe(401);
    expect((await platform.request('/inference/image/v1/txt2img', { method: 'POST', key: textKey, json: { prompt: 'x' } })).status).toBe(403);
  });

  it('refuses an upscaler the upstream does not list with 404 not_available, without sending it', async () => {
    // A WebUI fork that words its refusal its own way.
    webui.behaviour.fail = { status: 500, body: { error: 'KeyError', detail: '', body: '', errors: "'4x-UltraSharp'" } };
    const image = (await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png().toBuffer()).toString('base64');
    const response = await platform.request('/inference/image/v1/upscale-img', { method: 'POST', key: imageKey, json: { image, upscaler_1: '4x-UltraSharp' } });
    expect(response.status).toBe(404);
    expect(await errorOf(response)).toMatchObject({ code: 'not_available', param: 'upscaler_1' });
    const gatewayAnswer = await gateway('/v1/images/upscale', { image, upscaler: '4x-UltraSharp', provider: 'provider_d' });
    expect(gatewayAnswer.status).toBe(404);
    expect(webui.to('/sdapi/v1/extra-single-image')).toEqual([]);
  });

  it('checks img2img’s images as upscale does, before the upstream sees them', async () => {
    const good = (await sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } } }).png().toBuffer()).toString('base64');
    const cases: [Record<string, unknown>, string][] = [
      [{ init_images: ['not base64 at all!'] }, 'init_images[0]'],
      [{ init_images: [good, Buffer.from('just some words').toString('base64')] }, 'init_images[1]'],
      [{ init_images: ['https://example.com/x.png'] }, 'init_images[0]'],
      [{ init_images: [good], mask: '%%%' }, 'mask'],
    ];
    for (const [fields, param] of cases) {
      const response = await platform.request('/inference/image/v1/img2img', { method: 'POST', key: imageKey, json: { prompt: 'x', ...fields } });
      expect(response.status, param).toBe(400);
      expect(await errorOf(response), param).toMatchObject({ code: 'invalid_value', param });
    }
    expect(webui.to('/sdapi/v1/img2img')).toEqual([]);
  });

  it('answers image generation on a provider without an image engine 400 capability_not_served, not 503', async () => {
    const response = await gateway('/v1/images/generations', { prompt: 'a fox', provider: 'provider_a' });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ code: 'capability_not_served', param: 'provider' });
    expect((await errorOf(await gateway('/v1/images/generations', { prompt: 'a fox', provider: 'provider_b' }))).message).toMatch(/sd-webui/);
    expect(webui.to('/sdapi/v1/txt2img')).toEqual([]);
  });
});

describe('a client that goes away', () => {
  it('is logged as a disconnect at info, not as a failure at error level', async () => {
    let release!: () => void;
    a.behaviour.firstChunkGate = new Promise<void>((resolve) => (release = resolve));
    const before = logs.length;
    const controller = new AbortController();
    const pending = fetch(`${platform.baseUrl}/inference/text/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${textKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(chat('a-model')),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    // The upstream has the request: the client leaves before any token.
    await waitFor('the upstream to get the request', async () => a.requests.some((r) => r.method === 'POST'));
    controller.abort();
    await pending;
    const logged = await waitFor('the disconnect in the log', async () => logs.find((line) => line.msg === 'the client closed the connection before the answer'));
    expect(logged).toMatchObject({ level: 30 });
    release();
    expect(logs.slice(before).filter((line) => (line.level as number) >= 50)).toEqual([]);
  });

  it('after a stream has opened is logged as a disconnect too', async () => {
    let release!: () => void;
    // The stream opens; the upstream then holds its tokens until the client has gone.
    a.behaviour.firstChunkGate = new Promise<void>((resolve) => (release = resolve));
    const before = logs.length;
    const controller = new AbortController();
    const response = await fetch(`${platform.baseUrl}/inference/gateway/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chat('a-model', { provider: 'provider_a', stream: true })),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    controller.abort();
    const logged = await waitFor('the disconnect in the log', async () => logs.slice(before).find((line) => line.msg === 'the client closed the connection before the answer'));
    expect(logged).toMatchObject({ level: 30 });
    release();
    expect(logs.slice(before).filter((line) => (line.level as number) >= 50)).toEqual([]);
  });
});

describe('a streamed answer', () => {
  /** Reads server-sent events from a response body, one data payload at a time. */
  function events(response: Response) {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    return async (): Promise<string | undefined> => {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end !== -1) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          return event.replace(/^data: /, '');
        }
        const { value, done } = await reader.read();
        if (done) return undefined;
        buffer += decoder.decode(value, { stream: true });
      }
    };
  }

  async function startsAtOnce(base: string): Promise<void> {
    let release!: () => void;
    a.behaviour.firstChunkGate = new Promise<void>((resolve) => (release = resolve));
    try {
      // The upstream holds its first token until released: headers and the role chunk come before it.
      const response = await fetch(`${base}/inference/gateway/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(chat('a-model', { provider: 'provider_a', stream: true })),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const next = events(response);
      const first = JSON.parse((await next())!) as OpenAI.ChatCompletionChunk;
      expect(first.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      release();
      let text = '';
      for (let event = await next(); event !== undefined && event !== '[DONE]'; event = await next()) text += (JSON.parse(event) as OpenAI.ChatCompletionChunk).choices[0]?.delta.content ?? '';
      expect(text).toBe('Hello, loopback world.');
    } finally {
      release();
    }
  }

  it('sends its headers and role chunk as soon as the upstream has the request, before the first token', async () => {
    await startsAtOnce(platform.baseUrl);
  });

  it('does so through an edge apart from the inference subgraph too (the relay)', async () => {
    const { openIdentityStore } = await import('../../identity/index.js');
    const { createLogger } = await import('../../core/logger.js');
    const { startEdgeService } = await import('../../platform/platform.js');
    const { testConfig } = await import('../support/platform-harness.js');
    const identityOrm = await openIdentityStore(platform.databaseUrl);
    const edge = await startEdgeService(testConfig(), identityOrm, platform.subgraphUrls, createLogger('silent'));
    try {
      await startsAtOnce(edge.url.replace(/\/graphql$/, ''));
    } finally {
      await edge.stop();
      await identityOrm.close(true);
    }
  });

  it('still refuses with a status what is refused before a provider has it', async () => {
    const refused = await gateway('/v1/chat/completions', chat('nowhere-model', { provider: 'provider_a', stream: true }));
    expect(refused.status).toBe(404);
    // A provider failing before the stream opened: its status too.
    onGenerationOnly(a, { fail: { status: 400, message: 'bad', type: 'BadRequestError', param: 'temperature' } });
    const failed = await gateway('/v1/chat/completions', chat('a-model', { provider: 'provider_a', stream: true }));
    expect(failed.status).toBe(422);
    expect(await errorOf(failed)).toMatchObject({ param: 'temperature' });
  });
});
