import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inferenceConfigFrom } from '../../subgraphs/inference/config/load-inference-config.js';
import { LoopbackSdWebuiServer } from '../support/loopback-sdwebui-server.js';
import { startTestPlatform, type TestPlatform } from '../support/platform-harness.js';

/**
 * The image paths of Service I, the proxy and the gateway over a loopback Stable-Diffusion-WebUI
 * (provider_d), and what the platform answers where no provider has an image upstream
 * (provider_c): 400 capability_not_served naming the setting for generation, the embedded upscalers for None, Lanczos and
 * Nearest, 404 for a neural one.
 */
let platform: TestPlatform;
let webui: LoopbackSdWebuiServer;
let imageKey: string;
let textKey: string;

beforeAll(async () => {
  webui = await LoopbackSdWebuiServer.start();
  const config = inferenceConfigFrom(
    {
      providers: [
        { id: 'provider_a', name: 'Provider A', engines: [{ type: 'ocr' }] },
        { id: 'provider_b', name: 'Provider B', engines: [{ type: 'ocr' }], maxConcurrency: 3 },
        { id: 'provider_c', name: 'Provider C', engines: [{ type: 'ocr' }] },
        { id: 'provider_d', name: 'Provider D', engines: [{ type: 'ocr' }, { type: 'sd-webui', url: webui.url }] },
      ],
    },
    null,
  );
  platform = await startTestPlatform({ inference: config });
  imageKey = await platform.issueKey('acme', 'image');
  textKey = await platform.issueKey('acme', 'text');
}, 60_000);

afterAll(async () => {
  await platform?.close();
  await webui?.close();
});

afterEach(() => webui.reset());

async function png(width: number, height: number, alpha = false): Promise<Buffer> {
  return sharp({ create: { width, height, channels: alpha ? 4 : 3, background: alpha ? { r: 10, g: 20, b: 30, alpha: 1 } : { r: 10, g: 20, b: 30 } } }).png().toBuffer();
}

const post = (path: string, json: unknown, key?: string) => platform.request(path, { method: 'POST', json, ...(key ? { key } : {}) });

describe('Service I image paths (image keys)', () => {
  it('generates with txt2img in the WebUI shape, the spec defaults sent upstream', async () => {
    const response = await post('/inference/image/v1/txt2img', { prompt: 'a red fox', seed: 5, width: 64, height: 96, batch_size: 2 }, imageKey);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { images: string[]; parameters: Record<string, unknown>; info: string };
    expect(body.images).toHaveLength(2);
    const meta = await sharp(Buffer.from(body.images[0]!, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([64, 96]);
    expect(JSON.parse(body.info)).toMatchObject({ seed: 5 });
    const sent = webui.to('/sdapi/v1/txt2img').at(-1)!.body as Record<string, unknown>;
    expect(sent).toMatchObject({ prompt: 'a red fox', steps: 20, cfg_scale: 7, sampler_name: 'Euler a' });
  });

  it('refuses a text key, and every value out of the spec ranges with 400 naming the parameter', async () => {
    expect((await post('/inference/image/v1/txt2img', { prompt: 'x' }, textKey)).status).toBe(403);
    for (const [field, value] of [['steps', 0], ['steps', 151], ['width', 63], ['height', 2049], ['cfg_scale', 21], ['batch_size', 5], ['seed', -2]] as const) {
      const response = await post('/inference/image/v1/txt2img', { prompt: 'x', [field]: value }, imageKey);
      expect(response.status, `${field}=${value}`).toBe(400);
      expect(((await response.json()) as { error: { param: string } }).error.param).toBe(field);
    }
    const img = await post('/inference/image/v1/img2img', { prompt: 'x', init_images: [(await png(64, 64)).toString('base64')], denoising_strength: 1.5 }, imageKey);
    expect(img.status).toBe(400);
    expect(((await img.json()) as { error: { param: string } }).error.param).toBe('denoising_strength');
    expect((await webui.to('/sdapi/v1/txt2img')).length).toBe(0);
  });

  it('lists sd-models as an array of names, samplers, upscalers, options and parallel requests', async () => {
    const models = await (await platform.request('/inference/image/sdapi/v1/sd-models', { key: imageKey })).json();
    expect(models).toEqual(['v1-5-pruned-emaonly', 'sd_xl_base_1.0']);
    const samplers = (await (await platform.request('/inference/image/v1/img-samplers', { key: imageKey })).json()) as { name: string }[];
    expect(samplers.map((s) => s.name)).toContain('Euler a');
    const upscalers = (await (await platform.request('/inference/image/v1/upscalers', { key: imageKey })).json()) as { name: string; neural: boolean }[];
    expect(upscalers.find((u) => u.name === 'ESRGAN_4x')?.neural).toBe(true);
    const options = (await (await platform.request('/inference/image/v1/img-options', { key: imageKey })).json()) as Record<string, unknown>;
    expect(options).toMatchObject({ defaults: { steps: 20, width: 1024, height: 1024 }, image_generation: { provider: 'provider_d' } });
    const parallel = (await (await platform.request('/inference/image/v1/parallel-requests', { key: imageKey })).json()) as Record<string, unknown>;
    expect(parallel).toMatchObject({ limit: 6, in_use: 1 });
  });

  it('upscales: Nearest embedded on real pixels, a neural upscaler through the upstream', async () => {
    const checker = await sharp(Buffer.from([0, 0, 0, 255, 255, 255, 255, 255, 255, 0, 0, 0]), { raw: { width: 2, height: 2, channels: 3 } }).png().toBuffer();
    const near = await post('/inference/image/v1/upscale-img', { image: checker.toString('base64'), upscaler_1: 'Nearest', upscaling_resize: 4 }, imageKey);
    expect(near.status).toBe(200);
    const out = (await near.json()) as { images: string[] };
    const { data, info } = await sharp(Buffer.from(out.images[0]!, 'base64')).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).toEqual([8, 8]);
    // Nearest keeps the checkerboard's blocks exactly: top-left black, top-right white.
    expect([data[0], data[3 * 7]]).toEqual([0, 255]);
    const neural = await post('/inference/image/v1/upscale-img', { image: checker.toString('base64'), upscaler_1: 'ESRGAN_4x' }, imageKey);
    expect(neural.status).toBe(200);
    expect(webui.to('/sdapi/v1/extra-single-image').length).toBe(1);
  });
});

describe('the keyless proxy: /api/<name> is Service I /sdapi/v1/<name>', () => {
  it('generates and lists without a key', async () => {
    const response = await post('/inference/proxy/api/txt2img', { prompt: 'x', width: 64, height: 64 });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { images: string[] }).images).toHaveLength(1);
    expect(await (await platform.request('/inference/proxy/api/sd-models')).json()).toEqual(['v1-5-pruned-emaonly', 'sd_xl_base_1.0']);
    expect((await post('/inference/proxy/api/txt2img', { prompt: 'x', steps: 500 })).status).toBe(400);
  });
});

describe('the gateway images API (openai client)', () => {
  const openai = () => new OpenAI({ baseURL: `${platform.baseUrl}/inference/gateway/v1`, apiKey: 'unused', maxRetries: 0 });

  it('generates with images.generate on provider_d', async () => {
    const answer = (await openai().images.generate({ prompt: 'a lighthouse', n: 2, size: '256x128', provider: 'provider_d' } as OpenAI.ImageGenerateParamsNonStreaming)) as OpenAI.ImagesResponse;
    expect(answer.data).toHaveLength(2);
    const meta = await sharp(Buffer.from(answer.data![0]!.b64_json!, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([256, 128]);
  });

  it('edits with images.edit (multipart), the OpenAI mask turned into the WebUI polarity', async () => {
    const image = await png(64, 64);
    // Transparent top half: what OpenAI's mask marks for editing.
    const rgba = Buffer.alloc(64 * 64 * 4);
    for (let pixel = 0; pixel < 64 * 64; pixel++) rgba[pixel * 4 + 3] = pixel < 64 * 32 ? 0 : 255;
    const mask = await sharp(rgba, { raw: { width: 64, height: 64, channels: 4 } }).png().toBuffer();
    const answer = (await openai().images.edit({ image: await toFile(image, 'in.png', { type: 'image/png' }), mask: await toFile(mask, 'mask.png', { type: 'image/png' }), prompt: 'a boat', size: '64x64' } as OpenAI.ImageEditParamsNonStreaming)) as OpenAI.ImagesResponse;
    expect(answer.data).toHaveLength(1);
    const sent = webui.to('/sdapi/v1/img2img').at(-1)!.body as { mask: string; init_images: string[] };
    const { data, info } = await sharp(Buffer.from(sent.mask, 'base64')).raw().toBuffer({ resolveWithObject: true });
    // White (repaint) where the OpenAI mask was transparent, black below.
    expect(data[0]).toBe(255);
    expect(data[(info.width * (info.height - 1)) * info.channels]).toBe(0);
  });

  it('refuses generation where no provider has an image upstream with 400 capability_not_served, naming the setting; upscales there with the embedded upscalers', async () => {
    const refused = await post('/inference/gateway/v1/images/generations', { prompt: 'x', provider: 'provider_c' });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'capability_not_served', message: expect.stringMatching(/sd-webui/) });
    const image = (await png(32, 16)).toString('base64');
    const up = await post('/inference/gateway/v1/images/upscale', { image, upscaler: 'Lanczos', scale: 2, provider: 'provider_c' });
    expect(up.status).toBe(200);
    const meta = await sharp(Buffer.from(((await up.json()) as { data: { b64_json: string }[] }).data[0]!.b64_json, 'base64')).metadata();
    expect([meta.width, meta.height]).toEqual([64, 32]);
    const neural = await post('/inference/gateway/v1/images/upscale', { image, upscaler: 'ESRGAN_4x', provider: 'provider_c' });
    expect(neural.status).toBe(404);
    expect(((await neural.json()) as { error: { code: string } }).error.code).toBe('not_available');
  });

  it('lists the image routes in /v1/routes', async () => {
    const routes = (await (await platform.request('/inference/gateway/v1/routes')).json()) as { data: { path: string }[] };
    expect(routes.data.map((r) => r.path)).toEqual(expect.arrayContaining(['/v1/images/generations', '/v1/images/edits', '/v1/images/upscale']));
  });
});
