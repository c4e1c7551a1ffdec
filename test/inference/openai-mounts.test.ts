import { rm } from 'node:fs/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llamaInferenceConfig, modelsReady } from '../support/inference-config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/**
 * The official openai client, unmodified, against every inference mount of a running platform:
 * the embedded llama.cpp serves a random-weight GGUF written by the test, so the text is
 * gibberish but every byte of it went through the real engine.
 */
let platform: TestPlatform;
let modelsDir: string;
let textKey: string;
let imageKey: string;

const MODEL = 'tiny';

beforeAll(async () => {
  const built = await llamaInferenceConfig();
  modelsDir = built.modelsDir;
  platform = await startTestPlatform({ inference: built.config });
  textKey = await platform.issueKey('acme', 'text');
  imageKey = await platform.issueKey('acme', 'image');
  await modelsReady(platform.baseUrl);
}, 120_000);

afterAll(async () => {
  await platform?.close();
  if (modelsDir) await rm(modelsDir, { recursive: true, force: true });
});

function client(mount: string, apiKey = 'unused'): OpenAI {
  return new OpenAI({ baseURL: `${platform.baseUrl}${mount}/v1`, apiKey, maxRetries: 0 });
}

const MOUNTS = [
  { name: 'Service T', mount: '/inference/text', key: () => textKey },
  { name: 'Service I', mount: '/inference/image', key: () => textKey },
  { name: 'the proxy', mount: '/inference/proxy', key: () => 'ignored' },
  { name: 'the gateway', mount: '/inference/gateway', key: () => 'ignored' },
];

describe.each(MOUNTS)('the openai client against $name', ({ mount, key }) => {
  it('lists the models', async () => {
    const page = await client(mount, key()).models.list();
    const ids = page.data.map((m) => m.id);
    expect(ids).toContain(MODEL);
    expect(ids).toContain('ocr-eng');
    const tiny = page.data.find((m) => m.id === MODEL) as unknown as Record<string, unknown>;
    expect(tiny).toMatchObject({ object: 'model', context_length: 512, input_modalities: ['text'] });
  });

  it('completes a chat, streamed and not, with exact usage', async () => {
    const openai = client(mount, key());
    const whole = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 5, seed: 3, temperature: 0 });
    expect(whole.object).toBe('chat.completion');
    expect(whole.choices[0]!.finish_reason).toBe('length');
    expect(whole.usage!.completion_tokens).toBe(5);
    const stream = await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 5,
      seed: 3,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null = null;
    for await (const part of stream) {
      expect(part.object).toBe('chat.completion.chunk');
      text += part.choices[0]?.delta.content ?? '';
      finish = part.choices[0]?.finish_reason ?? finish;
      if (part.usage) usage = part.usage;
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(finish).toBe('length');
    expect(usage).toEqual(whole.usage);
  });

  it('completes a raw prompt', async () => {
    const done = await client(mount, key()).completions.create({ model: MODEL, prompt: 'Once upon', max_tokens: 3, temperature: 0 });
    expect(done.object).toBe('text_completion');
    expect(done.usage!.completion_tokens).toBe(3);
  });

  it('answers an unknown model with NotFoundError', async () => {
    await expect(client(mount, key()).chat.completions.create({ model: 'nowhere', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('errors by each interface table', () => {
  it('Service T: AuthenticationError without a valid key, UnprocessableEntityError out of range', async () => {
    await expect(client('/inference/text', 'sk-nothing').models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(client('/inference/text', textKey).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 3 })).rejects.toBeInstanceOf(OpenAI.UnprocessableEntityError);
  });

  it('Service I and the proxy: 400 for a value out of range', async () => {
    for (const [mount, key] of [['/inference/image', textKey], ['/inference/proxy', 'x']] as const) {
      const error = await client(mount, key).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 3 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('temperature');
    }
  });

  it('Service I text endpoints refuse an image key', async () => {
    await expect(client('/inference/image', imageKey).models.list()).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});

describe('an edge apart from the inference subgraph (relayed over HTTP)', () => {
  it('serves the same answers through the relay: keyed and keyless, streamed, errors in the interface table', async () => {
    const { openIdentityStore } = await import('../../identity/index.js');
    const { createLogger } = await import('../../core/logger.js');
    const { startEdgeService } = await import('../../platform/platform.js');
    const { testConfig } = await import('../support/platform-harness.js');
    const identityOrm = await openIdentityStore(platform.databaseUrl);
    // No localInference: this edge finds the subgraph at its URL, as `platform/entries/gateway.ts` does.
    const edge = await startEdgeService(testConfig(), identityOrm, platform.subgraphUrls, createLogger('silent'));
    try {
      const base = edge.url.replace(/\/graphql$/, '');
      const relayed = (mount: string, apiKey = 'unused') => new OpenAI({ baseURL: `${base}${mount}/v1`, apiKey, maxRetries: 0 });
      const direct = await client('/inference/text', textKey).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, seed: 9 });
      const viaRelay = await relayed('/inference/text', textKey).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, seed: 9 });
      expect(viaRelay.choices[0]!.message.content).toBe(direct.choices[0]!.message.content);
      const stream = await relayed('/inference/gateway').completions.create({ model: MODEL, prompt: 'x', max_tokens: 3, temperature: 0, stream: true, stream_options: { include_usage: true } });
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const part of stream) if (part.usage) usage = part.usage;
      expect(usage?.completion_tokens).toBe(3);
      await expect(relayed('/inference/text', textKey).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], temperature: 3 })).rejects.toBeInstanceOf(OpenAI.UnprocessableEntityError);
      await expect(relayed('/inference/proxy').chat.completions.create({ model: 'nowhere', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      // A subgraph request without the edge's signature is refused, keyless paths included.
      const unsigned = await fetch(`${new URL(platform.subgraphUrls.inference).origin}/openai/gateway/v1/models`);
      expect(unsigned.status).toBe(401);
    } finally {
      await edge.stop();
      await identityOrm.close(true);
    }
  });
});
