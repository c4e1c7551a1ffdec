import http from 'node:http';
import type net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ImageEngineError } from '../../../../subgraphs/inference/engine/image-engine.js';
import { SdWebuiEngine } from '../../../../subgraphs/inference/engines/sd-webui/sd-webui-engine.js';
import { LOOPBACK_CHECKPOINTS, LoopbackSdWebuiServer, loopbackColour } from '../../../support/loopback-sdwebui-server.js';
import { colours, decode, solid } from './pixels.js';

const signal = () => new AbortController().signal;

async function refusal(promise: Promise<unknown>): Promise<ImageEngineError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ImageEngineError);
  return error as ImageEngineError;
}

describe('the sd-webui engine speaks the WebUI API', () => {
  let server: LoopbackSdWebuiServer;
  let engine: SdWebuiEngine;

  beforeAll(async () => {
    server = await LoopbackSdWebuiServer.start();
    engine = new SdWebuiEngine({ baseUrl: server.url, checkpointCacheMs: 0 });
  });
  afterAll(async () => {
    await engine.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  it('lists the checkpoints as the WebUI does, and their model names as the spec lists them', async () => {
    expect(await engine.checkpoints()).toEqual(LOOPBACK_CHECKPOINTS);
    expect(await engine.models()).toEqual(['v1-5-pruned-emaonly', 'sd_xl_base_1.0']);
  });

  it('lists samplers with their aliases, and upscalers with only the three non-neural ones marked so', async () => {
    expect((await engine.samplers()).map((sampler) => [sampler.name, sampler.aliases])).toEqual([
      ['DPM++ 2M', ['k_dpmpp_2m']],
      ['Euler a', ['k_euler_a', 'k_euler_ancestral']],
      ['Euler', ['k_euler']],
    ]);
    expect((await engine.upscalers()).map((upscaler) => [upscaler.name, upscaler.neural, upscaler.scale, upscaler.servedBy])).toEqual([
      ['None', false, 4, 'sd-webui'],
      ['Lanczos', false, 4, 'sd-webui'],
      ['Nearest', false, 4, 'sd-webui'],
      ['ESRGAN_4x', true, 4, 'sd-webui'],
      ['R-ESRGAN 4x+', true, 4, 'sd-webui'],
      ['SwinIR 4x', true, 4, 'sd-webui'],
    ]);
  });

  it('answers the options and the progress of an idle WebUI', async () => {
    expect(await engine.options()).toMatchObject({ sd_model_checkpoint: LOOPBACK_CHECKPOINTS[0].title, samples_format: 'png' });
    expect(await engine.progress()).toMatchObject({ progress: 0, eta_relative: 0, current_image: null, state: { job_count: 0 } });
    expect(server.to('/sdapi/v1/progress')).toHaveLength(1);
  });

  it('generates batch_size PNG images of the requested size, with info as a JSON string carrying the seed', async () => {
    const answer = await engine.txt2img({ prompt: 'a red fox', width: 96, height: 64, batch_size: 3, seed: 4242, steps: 12, sampler_name: 'Euler a' }, signal());
    expect(answer.images).toHaveLength(3);
    for (const [index, image] of answer.images.entries()) {
      const decoded = await decode(image);
      expect([decoded.format, decoded.width, decoded.height]).toEqual(['png', 96, 64]);
      const { r, g, b } = loopbackColour(4242, index);
      expect([...colours(decoded)]).toEqual([`${r},${g},${b}`]);
    }
    expect(typeof answer.info).toBe('string');
    const info = JSON.parse(answer.info) as Record<string, unknown>;
    expect(info).toMatchObject({ seed: 4242, all_seeds: [4242, 4243, 4244], width: 96, height: 64, steps: 12, sampler_name: 'Euler a', sd_model_name: 'v1-5-pruned-emaonly' });
    expect(answer.parameters).toMatchObject({ prompt: 'a red fox', batch_size: 3, sampler_name: 'Euler a' });
    expect(answer.parameters).not.toHaveProperty('force_task_id');
    const sent = server.to('/sdapi/v1/txt2img')[0].body as Record<string, unknown>;
    expect(sent).toMatchObject({ prompt: 'a red fox', width: 96, height: 64, batch_size: 3, seed: 4242 });
    expect(sent.force_task_id).toMatch(/^task\(.+\)$/);
  });

  it('selects a checkpoint the WebUI way: override_settings.sd_model_checkpoint with the listed title', async () => {
    const answer = await engine.txt2img({ prompt: 'x', width: 64, height: 64, sd_model_checkpoint: 'sd_xl_base_1.0', override_settings: { CLIP_stop_at_last_layers: 2 } }, signal());
    const sent = server.to('/sdapi/v1/txt2img')[0].body as Record<string, unknown>;
    expect(sent).not.toHaveProperty('sd_model_checkpoint');
    expect(sent.override_settings).toEqual({ CLIP_stop_at_last_layers: 2, sd_model_checkpoint: 'sd_xl_base_1.0.safetensors [31e35c80fc]' });
    expect(JSON.parse(answer.info)).toMatchObject({ sd_model_name: 'sd_xl_base_1.0' });
    // A title, a title without its hash, a short hash and a file name name the same checkpoint.
    for (const name of ['sd_xl_base_1.0.safetensors [31e35c80fc]', 'sd_xl_base_1.0.safetensors', '31e35c80fc']) {
      await engine.img2img({ prompt: 'x', init_images: [await solid(8, 8)], width: 64, height: 64, sd_model_checkpoint: name }, signal());
    }
    expect(server.to('/sdapi/v1/img2img').map((request) => (request.body as { override_settings: Record<string, unknown> }).override_settings.sd_model_checkpoint)).toEqual([
      'sd_xl_base_1.0.safetensors [31e35c80fc]',
      'sd_xl_base_1.0.safetensors [31e35c80fc]',
      'sd_xl_base_1.0.safetensors [31e35c80fc]',
    ]);
  });

  it('refuses a checkpoint the WebUI does not list before sending anything (the WebUI would load a fallback)', async () => {
    const error = await refusal(engine.txt2img({ prompt: 'x', sd_model_checkpoint: 'ghost-model' }, signal()));
    expect([error.reason, error.param]).toEqual(['model_not_found', 'sd_model_checkpoint']);
    expect(error.message).toContain('ghost-model');
    const viaOverride = await refusal(engine.txt2img({ prompt: 'x', override_settings: { sd_model_checkpoint: 'ghost-model' } }, signal()));
    expect(viaOverride.reason).toBe('model_not_found');
    const conflicting = await refusal(engine.txt2img({ prompt: 'x', sd_model_checkpoint: 'sd_xl_base_1.0', override_settings: { sd_model_checkpoint: 'v1-5-pruned-emaonly' } }, signal()));
    expect([conflicting.reason, conflicting.param]).toEqual(['invalid_request', 'sd_model_checkpoint']);
    expect(server.to('/sdapi/v1/txt2img')).toEqual([]);
  });

  it('sends img2img with its init images, mask and the WebUI mask flag as given, and answers images of the requested size', async () => {
    const init = await solid(32, 32);
    const mask = await solid(32, 32, { r: 255, g: 255, b: 255 });
    const answer = await engine.img2img(
      { prompt: 'repaint', init_images: [init], mask, inpainting_mask_invert: 1, mask_blur: 4, denoising_strength: 0.4, width: 128, height: 80, seed: 7 },
      signal(),
    );
    expect(answer.images).toHaveLength(1);
    const decoded = await decode(answer.images[0]);
    expect([decoded.width, decoded.height]).toEqual([128, 80]);
    expect(answer.parameters).toMatchObject({ init_images: null, mask: null, inpainting_mask_invert: 1 });
    expect(JSON.parse(answer.info)).toMatchObject({ seed: 7, denoising_strength: 0.4 });
    expect(server.to('/sdapi/v1/img2img')[0].body).toMatchObject({ init_images: [init], mask, inpainting_mask_invert: 1, mask_blur: 4 });
  });

  it('refuses img2img without init images before sending it', async () => {
    const error = await refusal(engine.img2img({ prompt: 'x', init_images: [] }, signal()));
    expect([error.reason, error.param]).toEqual(['invalid_request', 'init_images']);
    expect(server.to('/sdapi/v1/img2img')).toEqual([]);
  });

  it('upscales through extra-single-image with a neural upscaler the upstream serves', async () => {
    const answer = await engine.upscale({ image: await solid(20, 10), upscaler_1: 'ESRGAN_4x', upscaling_resize: 4 }, signal());
    const decoded = await decode(answer.image);
    expect([decoded.width, decoded.height]).toEqual([80, 40]);
    expect(answer.html_info).toContain('ESRGAN_4x');
    expect(server.to('/sdapi/v1/extra-single-image')[0].body).toMatchObject({ upscaler_1: 'ESRGAN_4x', upscaling_resize: 4 });
  });

  it('reuses one keep-alive connection for sequential requests', async () => {
    const before = server.connections;
    for (let i = 0; i < 4; i++) await engine.txt2img({ prompt: `n${i}`, width: 64, height: 64 }, signal());
    await engine.samplers();
    expect(server.connections - before).toBeLessThanOrEqual(1);
    expect(server.requests).toHaveLength(5);
  });

  it('reports health from the checkpoint listing', async () => {
    expect(await engine.health()).toEqual({ ok: true });
    server.behaviour.failListings = { status: 500, body: { error: 'RuntimeError', detail: '', body: '', errors: 'boom' } };
    expect(await engine.health()).toEqual({ ok: false, detail: 'The image engine failed' });
  });
});

describe('basic auth from the URL', () => {
  let server: http.Server;
  let url: string;
  const seen: (string | undefined)[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('[]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends user:password in the URL as basic auth (the WebUI's --api-auth)", async () => {
    const base = new URL(url);
    base.username = 'webui';
    base.password = 's3cret:x';
    const engine = new SdWebuiEngine({ baseUrl: base.toString() });
    expect(await engine.samplers()).toEqual([]);
    await engine.close();
    expect(seen).toEqual([`Basic ${Buffer.from('webui:s3cret:x').toString('base64')}`]);
  });
});
