import sharp, { type Sharp } from 'sharp';
import { describe, expect, it } from 'vitest';
import { ImageEngineError, type UpscaleRequest } from '../../../../subgraphs/inference/engine/image-engine.js';
import { EmbeddedUpscaleEngine } from '../../../../subgraphs/inference/engines/upscale/embedded-upscale-engine.js';
import { colours, decode, pixel } from '../sd-webui/pixels.js';

const engine = new EmbeddedUpscaleEngine();
const signal = () => new AbortController().signal;

const BLACK = [0, 0, 0];
const WHITE = [255, 255, 255];

// A 2x2 checkerboard: black and white on the diagonal.
async function checkerboard(): Promise<Buffer> {
  const raw = Buffer.from([...BLACK, ...WHITE, ...WHITE, ...BLACK]);
  return sharp(raw, { raw: { width: 2, height: 2, channels: 3 } }).png().toBuffer();
}

// A horizontal gradient, so a resize has pixels to interpolate.
async function gradient(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) raw.fill(Math.round((255 * x) / Math.max(1, width - 1)), (y * width + x) * 3, (y * width + x) * 3 + 3);
  return sharp(raw, { raw: { width, height, channels: 3 } }).png().toBuffer();
}

async function refused(request: UpscaleRequest, reason: string, param: string): Promise<ImageEngineError> {
  const error = await engine.upscale(request, signal()).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ImageEngineError);
  expect([(error as ImageEngineError).reason, (error as ImageEngineError).param]).toEqual([reason, param]);
  return error as ImageEngineError;
}

describe('the embedded upscalers on real pixels', () => {
  it('Nearest scales a 2x2 checkerboard by 4 into exact 4x4 blocks', async () => {
    const answer = await engine.upscale({ image: (await checkerboard()).toString('base64'), upscaler_1: 'Nearest', upscaling_resize: 4 }, signal());
    const image = await decode(answer.image);
    expect([image.format, image.width, image.height]).toEqual(['png', 8, 8]);
    for (let y = 0; y < 8; y++)
      for (let x = 0; x < 8; x++) expect(pixel(image, x, y), `pixel ${x},${y}`).toEqual((x < 4) === (y < 4) ? BLACK : WHITE);
    expect(answer.html_info).toBe('<p>Postprocess upscale by: 4, Postprocess upscaler: Nearest</p>');
  });

  it('Lanczos scales by any factor, flooring sizes as the WebUI does, and interpolates', async () => {
    const answer = await engine.upscale({ image: (await gradient(3, 5)).toString('base64'), upscaler_1: 'Lanczos', upscaling_resize: 2.5 }, signal());
    const image = await decode(answer.image);
    expect([image.width, image.height]).toEqual([7, 12]);
    // A gradient of three values comes back with values between them: a real interpolating kernel.
    expect(colours(image).size).toBeGreaterThan(3);
    const third = await decode((await engine.upscale({ image: (await gradient(3, 3)).toString('base64'), upscaler_1: 'Lanczos', upscaling_resize: 10 / 3 }, signal())).image);
    expect([third.width, third.height]).toEqual([10, 10]);
    const down = await decode((await engine.upscale({ image: (await gradient(40, 20)).toString('base64'), upscaler_1: 'Lanczos', upscaling_resize: 0.5 }, signal())).image);
    expect([down.width, down.height]).toEqual([20, 10]);
  });

  it('scales to a target: covering and cropping it by default, or keeping the whole image scaled by the larger ratio', async () => {
    const image = (await gradient(40, 20)).toString('base64');
    const cropped = await decode((await engine.upscale({ image, upscaler_1: 'Lanczos', resize_mode: 1, upscaling_resize_w: 32, upscaling_resize_h: 32 }, signal())).image);
    expect([cropped.width, cropped.height]).toEqual([32, 32]);
    const whole = await decode(
      (await engine.upscale({ image, upscaler_1: 'Nearest', resize_mode: 1, upscaling_resize_w: 32, upscaling_resize_h: 32, upscaling_crop: false }, signal())).image,
    );
    expect([whole.width, whole.height]).toEqual([64, 32]);
  });

  it('None returns the image at its own size whatever the factor, re-encoded', async () => {
    const source = await checkerboard();
    const answer = await engine.upscale({ image: source.toString('base64'), upscaler_1: 'None', upscaling_resize: 4 }, signal());
    const image = await decode(answer.image);
    expect([image.width, image.height]).toEqual([2, 2]);
    expect([pixel(image, 0, 0), pixel(image, 1, 0)]).toEqual([BLACK, WHITE]);
    expect(answer.html_info).toBe('');
    // The WebUI's default upscaler_1 is None too.
    expect((await decode((await engine.upscale({ image: source.toString('base64') }, signal())).image)).width).toBe(2);
  });

  it.each([
    ['png', (pipeline: Sharp) => pipeline.png()],
    ['jpeg', (pipeline: Sharp) => pipeline.jpeg()],
    ['webp', (pipeline: Sharp) => pipeline.webp()],
  ] as const)('takes %s and answers in the same format', async (format, encode) => {
    const input = await encode(sharp({ create: { width: 16, height: 12, channels: 3, background: { r: 10, g: 200, b: 30 } } })).toBuffer();
    const answer = await engine.upscale({ image: input.toString('base64'), upscaler_1: 'Lanczos', upscaling_resize: 2 }, signal());
    const image = await decode(answer.image);
    expect([image.format, image.width, image.height]).toEqual([format, 32, 24]);
  });

  it('accepts a data: URI and line-wrapped base64, as WebUI clients send them', async () => {
    const base64 = (await checkerboard()).toString('base64');
    const fromUri = await decode((await engine.upscale({ image: `data:image/png;base64,${base64}`, upscaler_1: 'Nearest', upscaling_resize: 2 }, signal())).image);
    expect(fromUri.width).toBe(4);
    const wrapped = base64.replace(/(.{20})/g, '$1\n');
    expect((await decode((await engine.upscale({ image: wrapped, upscaler_1: 'Nearest', upscaling_resize: 2 }, signal())).image)).width).toBe(4);
  });

  it('applies the EXIF orientation before scaling', async () => {
    // Stored 20x10 with orientation 6 (rotate 90°): it is a 10x20 picture.
    const rotated = await sharp({ create: { width: 20, height: 10, channels: 3, background: '#808080' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const image = await decode((await engine.upscale({ image: rotated.toString('base64'), upscaler_1: 'Lanczos', upscaling_resize: 2 }, signal())).image);
    expect([image.width, image.height]).toEqual([20, 40]);
  });

  it('refuses what is not a PNG, JPEG or WebP image as invalid_request on image', async () => {
    await refused({ image: Buffer.from('plain text, not pixels').toString('base64'), upscaler_1: 'Lanczos' }, 'invalid_request', 'image');
    await refused({ image: 'not base64 at all!', upscaler_1: 'Lanczos' }, 'invalid_request', 'image');
    await refused({ image: '', upscaler_1: 'Lanczos' }, 'invalid_request', 'image');
    await refused({ image: 'https://example.com/cat.png', upscaler_1: 'Lanczos' }, 'invalid_request', 'image');
    const gif = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#ff0000' } }).gif().toBuffer();
    const error = await refused({ image: gif.toString('base64'), upscaler_1: 'Lanczos' }, 'invalid_request', 'image');
    expect(error.message).toContain('GIF');
    // A PNG cut short is no image either.
    const png = await gradient(64, 64);
    await refused({ image: png.subarray(0, png.length - 40).toString('base64'), upscaler_1: 'Lanczos' }, 'invalid_request', 'image');
  });

  it('refuses inputs over 2048 a side and outputs over 8192 a side', async () => {
    const wide = await sharp({ create: { width: 2049, height: 2, channels: 3, background: '#000' } }).png().toBuffer();
    await refused({ image: wide.toString('base64'), upscaler_1: 'Nearest', upscaling_resize: 1 }, 'invalid_request', 'image');
    const small = (await gradient(100, 10)).toString('base64');
    const error = await refused({ image: small, upscaler_1: 'Nearest', upscaling_resize: 82 }, 'invalid_request', 'upscaling_resize');
    expect(error.message).toContain('8200x820');
    await refused({ image: small, upscaler_1: 'Nearest', resize_mode: 1, upscaling_resize_w: 9000, upscaling_resize_h: 10 }, 'invalid_request', 'upscaling_resize_w');
  });

  it('refuses factors and targets that are no size', async () => {
    const image = (await checkerboard()).toString('base64');
    await refused({ image, upscaler_1: 'Lanczos', upscaling_resize: 0 }, 'invalid_request', 'upscaling_resize');
    await refused({ image, upscaler_1: 'Lanczos', upscaling_resize: Number.NaN }, 'invalid_request', 'upscaling_resize');
    await refused({ image, upscaler_1: 'Lanczos', resize_mode: 1, upscaling_resize_w: 0, upscaling_resize_h: 4 }, 'invalid_request', 'upscaling_resize_w');
    await refused({ image, upscaler_1: 'Lanczos', resize_mode: 2 as 0 }, 'invalid_request', 'resize_mode');
  });

  it('refuses neural upscalers as not_available naming them, never resizing under their name', async () => {
    const image = (await checkerboard()).toString('base64');
    for (const name of ['ESRGAN_4x', 'R-ESRGAN 4x+', 'SwinIR 4x', 'LDSR', 'ScuNET GAN', 'Bogus']) {
      const error = await refused({ image, upscaler_1: name }, 'not_available', 'upscaler_1');
      expect(error.message).toContain(`"${name}"`);
      expect(error.message).toContain('sd-webui');
    }
    await refused({ image, upscaler_1: 'Lanczos', upscaler_2: 'ESRGAN_4x', extras_upscaler_2_visibility: 0.5 }, 'not_available', 'upscaler_2');
    await refused({ image, upscaler_1: 'Lanczos', gfpgan_visibility: 1 }, 'not_available', 'gfpgan_visibility');
    await refused({ image, upscaler_1: 'Lanczos', codeformer_visibility: 0.5 }, 'not_available', 'codeformer_visibility');
    // A second upscaler at visibility 0 does nothing in the WebUI either: served.
    expect((await engine.upscale({ image, upscaler_1: 'Nearest', upscaler_2: 'ESRGAN_4x', extras_upscaler_2_visibility: 0 }, signal())).image).not.toBe('');
  });

  it('lists the three it runs, none neural', async () => {
    expect(await engine.upscalers()).toEqual([
      { name: 'None', neural: false, servedBy: 'embedded-upscale' },
      { name: 'Lanczos', neural: false, servedBy: 'embedded-upscale' },
      { name: 'Nearest', neural: false, servedBy: 'embedded-upscale' },
    ]);
  });

  it('refuses generation as unavailable naming the setting, and lists no checkpoints or samplers', async () => {
    for (const call of [engine.txt2img(), engine.img2img(), engine.options(), engine.progress()]) {
      const error = await call.then(
        () => null,
        (caught: unknown) => caught,
      );
      expect((error as ImageEngineError).reason).toBe('unavailable');
      expect((error as ImageEngineError).message).toContain("type: 'sd-webui'");
    }
    expect([await engine.models(), await engine.checkpoints(), await engine.samplers()]).toEqual([[], [], []]);
  });

  it('answers an aborted signal with its reason', async () => {
    const controller = new AbortController();
    const reason = new Error('gone');
    controller.abort(reason);
    await expect(engine.upscale({ image: (await checkerboard()).toString('base64'), upscaler_1: 'Nearest' }, controller.signal)).rejects.toBe(reason);
  });
});
