import { rm } from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llamaInferenceConfig, modelsReady } from '../support/inference-config.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';
import { dataUri, encodePng, renderText } from '../subgraphs/inference/ocr/text-image.js';

/**
 * Images through the interfaces, read by the embedded OCR model (`ocr-eng`): Service T takes
 * URLs and base64, the gateway base64 only, Service I as each model is listed; every image URL
 * goes through the SSRF guard.
 */
let platform: TestPlatform;
let modelsDir: string;
let textKey: string;
let target: http.Server;
let targetUrl: string;
let targetHits = 0;
let targetConnections = 0;

const PNG = encodePng(renderText(['HELLO WORLD', 'SEVEN TAXIS']));

beforeAll(async () => {
  const built = await llamaInferenceConfig();
  modelsDir = built.modelsDir;
  platform = await startTestPlatform({ inference: built.config });
  textKey = await platform.issueKey('acme', 'text');
  // A server on a private (loopback) address that would hand out the image: the guard must keep the engine away from it.
  target = http.createServer((_req, res) => {
    targetHits++;
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG.length });
    res.end(PNG);
  });
  target.on('connection', () => targetConnections++);
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  targetUrl = `http://127.0.0.1:${(target.address() as net.AddressInfo).port}/x.png`;
  await modelsReady(platform.baseUrl);
}, 120_000);

afterAll(async () => {
  await platform?.close();
  await new Promise<void>((resolve) => (target ? target.close(() => resolve()) : resolve()));
  if (modelsDir) await rm(modelsDir, { recursive: true, force: true });
});

const MOUNTS = {
  serviceT: { mount: '/inference/text', key: () => textKey },
  serviceI: { mount: '/inference/image', key: () => textKey },
  gateway: { mount: '/inference/gateway', key: () => 'unused' },
} as const;

function client(name: keyof typeof MOUNTS): OpenAI {
  const { mount, key } = MOUNTS[name];
  return new OpenAI({ baseURL: `${platform.baseUrl}${mount}/v1`, apiKey: key(), maxRetries: 0 });
}

function imageMessage(url: string): OpenAI.ChatCompletionMessageParam[] {
  return [{ role: 'user', content: [{ type: 'text', text: 'What does it say?' }, { type: 'image_url', image_url: { url } }] }];
}

const IMAGE_PARAM = 'messages[0].content[1].image_url.url';

async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

type Listed = { id: string; input_modalities: string[]; image_url_input?: boolean };

async function listing(name: keyof typeof MOUNTS): Promise<Listed[]> {
  return (await client(name).models.list()).data as unknown as Listed[];
}

describe('reading text from an image', () => {
  it('Service T: ocr-eng reads the words of a PNG sent as a data URI, with its confidence', async () => {
    const done = await client('serviceT').chat.completions.create({ model: 'ocr-eng', messages: imageMessage(dataUri(PNG)) });
    const text = done.choices[0]!.message.content!;
    for (const word of ['HELLO', 'WORLD', 'SEVEN', 'TAXIS']) expect(text).toContain(word);
    expect(done.choices[0]!.finish_reason).toBe('stop');
    expect(done.usage).toEqual({ prompt_tokens: 0, completion_tokens: 4, total_tokens: 4 });
    const ocr = (done as unknown as { ocr: { confidence: unknown; images: unknown[] } }).ocr;
    expect(typeof ocr.confidence).toBe('number');
    expect(ocr.confidence).toBeGreaterThan(50);
    expect(ocr.confidence).toBeLessThanOrEqual(100);
    expect(ocr.images).toHaveLength(1);
  });

  it('the gateway takes the same image as base64, streamed too', async () => {
    const stream = await client('gateway').chat.completions.create({ model: 'ocr-eng', messages: imageMessage(dataUri(PNG)), stream: true, stream_options: { include_usage: true } });
    let text = '';
    let last: Record<string, unknown> | undefined;
    for await (const part of stream) {
      text += part.choices[0]?.delta.content ?? '';
      last = part as unknown as Record<string, unknown>;
    }
    for (const word of ['HELLO', 'WORLD', 'SEVEN', 'TAXIS']) expect(text).toContain(word);
    expect(last).toMatchObject({ choices: [], usage: { completion_tokens: 4 }, ocr: { confidence: expect.any(Number) } });
  });
});

describe('image URLs by the interface table', () => {
  it('the listings say which models take URLs: Service T all, the gateway none, Service I per model', async () => {
    const ocrOn = async (name: keyof typeof MOUNTS) => (await listing(name)).find((m) => m.id === 'ocr-eng')!;
    expect(await ocrOn('serviceT')).toMatchObject({ input_modalities: ['text', 'image'], image_url_input: true });
    expect(await ocrOn('gateway')).toMatchObject({ input_modalities: ['text', 'image'], image_url_input: false });
    expect(await ocrOn('serviceI')).toMatchObject({ input_modalities: ['text', 'image'], image_url_input: true });
    const tiny = (await listing('serviceI')).find((m) => m.id === 'tiny')!;
    expect(tiny.input_modalities).toEqual(['text']);
    expect(tiny).not.toHaveProperty('image_url_input');
  });

  it('the gateway refuses an image URL with 400 image_url_not_supported naming the url, before fetching it', async () => {
    const hits = targetConnections;
    const error = await refusal(client('gateway').chat.completions.create({ model: 'ocr-eng', messages: imageMessage(targetUrl) }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, code: 'image_url_not_supported', param: IMAGE_PARAM });
    expect(error.message).toMatch(/base64/);
    expect(targetConnections).toBe(hits);
  });

  it('Service I refuses an image for a model that takes none, by URL or base64', async () => {
    for (const url of ['https://example.com/x.png', dataUri(PNG)]) {
      const error = await refusal(client('serviceI').chat.completions.create({ model: 'tiny', messages: imageMessage(url) }));
      expect(error.status).toBe(400);
      expect(error.code).toBe('capability_not_served');
      expect(error.message).toMatch(/vision/);
    }
  });

  it('Service T refuses a URL to a private address with the SSRF guard’s clear error, without connecting', async () => {
    const before = { hits: targetHits, connections: targetConnections };
    const error = await refusal(client('serviceT').chat.completions.create({ model: 'ocr-eng', messages: imageMessage(targetUrl) }));
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(error).toMatchObject({ status: 422, code: 'invalid_value', param: IMAGE_PARAM });
    expect(error.message).toMatch(/image URL is not allowed/);
    expect(error.message).not.toContain('127.0.0.1');
    expect({ hits: targetHits, connections: targetConnections }).toEqual(before);
  });

  it('Service I takes URLs for ocr-eng, so the guard answers there too, with its table’s 400', async () => {
    const before = targetConnections;
    const error = await refusal(client('serviceI').chat.completions.create({ model: 'ocr-eng', messages: imageMessage(targetUrl) }));
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: IMAGE_PARAM });
    expect(error.message).toMatch(/image URL is not allowed/);
    expect(targetConnections).toBe(before);
  });
});

describe('data URIs that are not images', () => {
  const NOT_IMAGES = [
    ['text declared as text', `data:text/plain;base64,${Buffer.from('just some words here').toString('base64')}`, /not a PNG, JPEG/],
    ['text declared as a PNG', `data:image/png;base64,${Buffer.from('just some words here').toString('base64')}`, /not a PNG, JPEG/],
    ['not base64 at all', 'data:image/png,hello', /data:<mime>;base64,<data>/],
  ] as const;

  it.each([
    { name: 'serviceT', status: 422 },
    { name: 'serviceI', status: 400 },
    { name: 'gateway', status: 422 },
  ] as const)('are refused by $name with $status naming the image part', async ({ name, status }) => {
    for (const [, url, message] of NOT_IMAGES) {
      const error = await refusal(client(name).chat.completions.create({ model: 'ocr-eng', messages: imageMessage(url) }));
      expect(error.status, url).toBe(status);
      expect(error).toMatchObject({ code: 'invalid_value', param: IMAGE_PARAM, type: 'invalid_request_error' });
      expect(error.message).toMatch(message);
    }
  });
});
