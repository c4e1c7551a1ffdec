import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ImageEngineError } from '../../../../subgraphs/inference/engine/image-engine.js';
import { SdWebuiEngine } from '../../../../subgraphs/inference/engines/sd-webui/sd-webui-engine.js';
import { CombinedImageEngine } from '../../../../subgraphs/inference/engines/upscale/combined-image-engine.js';
import { EmbeddedUpscaleEngine } from '../../../../subgraphs/inference/engines/upscale/embedded-upscale-engine.js';
import { LoopbackSdWebuiServer } from '../../../support/loopback-sdwebui-server.js';
import { decode, solid } from '../sd-webui/pixels.js';

const signal = () => new AbortController().signal;

describe('an sd-webui upstream with the embedded upscalers', () => {
  let server: LoopbackSdWebuiServer;
  let engine: CombinedImageEngine;

  beforeAll(async () => {
    server = await LoopbackSdWebuiServer.start();
    engine = new CombinedImageEngine(new SdWebuiEngine({ baseUrl: server.url }), new EmbeddedUpscaleEngine());
  });
  afterAll(async () => {
    await engine.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  it('runs None, Lanczos and Nearest embedded, without a job in the WebUI queue', async () => {
    for (const upscaler_1 of ['None', 'Lanczos', 'Nearest']) {
      const answer = await engine.upscale({ image: await solid(10, 6), upscaler_1, upscaling_resize: 3 }, signal());
      const image = await decode(answer.image);
      expect([image.width, image.height]).toEqual(upscaler_1 === 'None' ? [10, 6] : [30, 18]);
    }
    expect(server.to('/sdapi/v1/extra-single-image')).toEqual([]);
  });

  it('sends neural upscalers, face restoration and blends to the upstream', async () => {
    const image = await solid(10, 6);
    const answer = await engine.upscale({ image, upscaler_1: 'R-ESRGAN 4x+', upscaling_resize: 4 }, signal());
    expect((await decode(answer.image)).width).toBe(40);
    await engine.upscale({ image, upscaler_1: 'Lanczos', upscaler_2: 'ESRGAN_4x', extras_upscaler_2_visibility: 0.3 }, signal());
    expect(server.to('/sdapi/v1/extra-single-image').map((request) => (request.body as { upscaler_1: string }).upscaler_1)).toEqual(['R-ESRGAN 4x+', 'Lanczos']);
  });

  it("lists the embedded three, then the upstream's neural ones", async () => {
    expect((await engine.upscalers()).map((upscaler) => [upscaler.name, upscaler.neural, upscaler.servedBy])).toEqual([
      ['None', false, 'embedded-upscale'],
      ['Lanczos', false, 'embedded-upscale'],
      ['Nearest', false, 'embedded-upscale'],
      ['ESRGAN_4x', true, 'sd-webui'],
      ['R-ESRGAN 4x+', true, 'sd-webui'],
      ['SwinIR 4x', true, 'sd-webui'],
    ]);
  });

  it('still lists and runs the embedded three while the upstream cannot list; neural names then fail as the upstream does', async () => {
    server.behaviour.failListings = { status: 503, body: { error: 'HTTPException', detail: 'busy', body: '', errors: '503: busy' } };
    expect((await engine.upscalers()).map((upscaler) => upscaler.name)).toEqual(['None', 'Lanczos', 'Nearest']);
    server.behaviour.fail = { status: 503, body: { error: 'HTTPException', detail: 'busy', body: '', errors: '503: busy' } };
    expect((await decode((await engine.upscale({ image: await solid(4, 4), upscaler_1: 'Nearest', upscaling_resize: 2 }, signal())).image)).width).toBe(8);
    const error = await engine.upscale({ image: await solid(4, 4), upscaler_1: 'ESRGAN_4x' }, signal()).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect((error as ImageEngineError).reason).toBe('unavailable');
  });

  it('generates and lists through the upstream', async () => {
    const answer = await engine.txt2img({ prompt: 'x', width: 64, height: 64, sd_model_checkpoint: 'v1-5-pruned-emaonly' }, signal());
    expect(answer.images).toHaveLength(1);
    expect(await engine.models()).toEqual(['v1-5-pruned-emaonly', 'sd_xl_base_1.0']);
    expect((await engine.samplers()).map((sampler) => sampler.name)).toContain('Euler a');
    expect(engine.kind).toBe('sd-webui');
    expect(await engine.health()).toEqual({ ok: true });
  });
});
