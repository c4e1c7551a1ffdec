import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inferenceConfigFrom } from '../../subgraphs/inference/config/load-inference-config.js';
import { HELD_ANSWER_CHARS } from '../../subgraphs/inference/images/image-answer.js';
import { LoopbackSdWebuiServer } from '../support/loopback-sdwebui-server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';
import { allIdle, waitFor } from './inference-test-kit.js';

/**
 * Generation answers pass through as they arrive: a client reads the first images while the
 * upstream is still writing the last, in both shapes (the WebUI's and OpenAI's); an answer that
 * fails within its first megabyte is still a proper error answer, one that fails later cuts the
 * connection; either way the provider's slot comes back and the call is recorded.
 */
let platform: TestPlatform;
let webui: LoopbackSdWebuiServer;
let imageKey: string;
let db: pg.Client;

beforeAll(async () => {
  webui = await LoopbackSdWebuiServer.start();
  const config = inferenceConfigFrom(
    {
      providers: [
        ...['provider_a', 'provider_b', 'provider_c'].map((id) => ({ id, name: id, engines: [{ type: 'ocr' }] })),
        { id: 'provider_d', name: 'Provider D', engines: [{ type: 'ocr' }, { type: 'sd-webui', url: webui.url }] },
      ],
    },
    null,
  );
  platform = await startTestPlatform({ inference: config });
  imageKey = await platform.issueKey('acme', 'image');
  db = new pg.Client({ connectionString: platform.databaseUrl });
  await db.connect();
}, 60_000);

afterAll(async () => {
  await db?.end();
  await platform?.close();
  await webui?.close();
});

afterEach(async () => {
  webui.reset();
  await allIdle(platform.baseUrl);
});

const base64 = (bytes: number) => randomBytes(bytes).toString('base64');
const INFO = JSON.stringify({ seed: 7, sd_model_name: 'sd_xl_base_1.0', infotexts: ['a "quoted" prompt\nSteps: 20'] });

/** A WebUI answer of `images` split so that its last piece waits for `gate`. */
function gatedAnswer(images: string[], gate: Promise<void>, cut = false) {
  const text = JSON.stringify({ images, parameters: { prompt: 'p', steps: 20, force_task_id: 'task(x)' }, info: INFO });
  const split = text.length - 1000;
  webui.behaviour.rawGeneration = { pieces: [text.slice(0, split), text.slice(split)], gate, cut };
}

/** Reads a response body until `bytes` have arrived; the reader to go on with. */
async function readUntil(response: Response, bytes: number) {
  const reader = response.body!.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  while (received < bytes) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the body ended after ${received} bytes`);
    chunks.push(value);
    received += value.length;
  }
  return {
    async rest(): Promise<string> {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return Buffer.concat(chunks).toString('utf8');
        chunks.push(value);
      }
    },
  };
}

const usageRow = (where: string) =>
  waitFor(`the usage row where ${where}`, async () => (await db.query(`select status, error_code, images, model from inference.usage_record where ${where}`)).rows[0] as Record<string, unknown> | undefined);

describe('a large answer', () => {
  it('reaches a Service I client while the upstream still writes it, whole and in the WebUI shape', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const images = [base64(1_500_000), base64(1_500_000)];
    gatedAnswer(images, gate);
    const response = await platform.request('/inference/image/v1/txt2img', { method: 'POST', key: imageKey, json: { prompt: 'streamed', width: 64, height: 64, batch_size: 2 } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    // The first three megabytes arrive before the upstream has written its last piece.
    const reading = await readUntil(response, 3_000_000);
    open();
    const body = JSON.parse(await reading.rest());
    expect(body).toEqual({ images, parameters: { prompt: 'p', steps: 20 }, info: INFO });
    expect(await usageRow(`interface = 'service_i' and images = 2`)).toMatchObject({ status: 200, error_code: null, model: 'sd_xl_base_1.0' });
  });

  it('reaches a gateway client in OpenAI’s shape the same way', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const images = [base64(1_200_000), base64(1_200_000), base64(10)];
    gatedAnswer(images, gate);
    const response = await platform.request('/inference/gateway/v1/images/generations', { method: 'POST', json: { prompt: 'three', n: 3, size: '64x64', provider: 'provider_d' } });
    expect(response.status).toBe(200);
    const reading = await readUntil(response, 2_000_000);
    open();
    const body = JSON.parse(await reading.rest());
    expect(body.data).toEqual(images.map((b64_json) => ({ b64_json, revised_prompt: 'three' })));
    expect(body.created).toBeTypeOf('number');
  });

  it('cut by the upstream past the first megabyte cuts the client’s connection, records the failure and frees the slot', async () => {
    let cut!: () => void;
    gatedAnswer([base64(3 * HELD_ANSWER_CHARS)], new Promise<void>((resolve) => (cut = resolve)), true);
    const response = await platform.request('/inference/proxy/api/txt2img', { method: 'POST', json: { prompt: 'cut', width: 64, height: 64 } });
    expect(response.status).toBe(200);
    const reading = await readUntil(response, 2 * HELD_ANSWER_CHARS);
    cut();
    await expect(reading.rest()).rejects.toThrow();
    expect(await usageRow(`interface = 'proxy' and status >= 500`)).toMatchObject({ error_code: expect.any(String) });
  });
});

describe('a small answer', () => {
  it('that breaks its shape is still a proper 502 with an error body', async () => {
    webui.behaviour.rawGeneration = { pieces: [JSON.stringify({ images: [base64(300)], parameters: {}, info: 5 })] };
    const response = await platform.request('/inference/image/v1/txt2img', { method: 'POST', key: imageKey, json: { prompt: 'bad', width: 64, height: 64 } });
    expect(response.status).toBe(502);
    const body = await response.json();
    expect(body.error.code).toBe('upstream_error');
    expect(body.error.message).toContain('info');
    expect(await usageRow(`interface = 'service_i' and status = 502`)).toMatchObject({ error_code: 'upstream_error' });
  });

  it('with images null is an answer without images', async () => {
    webui.behaviour.rawGeneration = { pieces: [JSON.stringify({ images: null, parameters: { prompt: 'x' }, info: '{}' })] };
    const response = await platform.request('/inference/proxy/api/txt2img', { method: 'POST', json: { prompt: 'none', width: 64, height: 64 } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ images: [], parameters: { prompt: 'x' }, info: '{}' });
  });
});
