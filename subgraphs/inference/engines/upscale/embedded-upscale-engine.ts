import sharp, { type KernelEnum, type Metadata, type Sharp } from 'sharp';
import type {
  ImageGenerationStream,
  EmbeddedUpscalerName,
  ImageEngine,
  ImageGenerationResponse,
  ImageProgress,
  Sampler,
  SdModel,
  Upscaler,
  UpscaleRequest,
  UpscaleResponse,
} from '../../engine/image-engine.js';
import { EMBEDDED_UPSCALERS, IMAGE_UPSTREAM_SETTING, ImageEngineError, isEmbeddedUpscaler } from '../../engine/image-engine.js';
import type { EngineHealth } from '../../engine/text-engine.js';
import { decodeBase64Image } from './base64-image.js';
import { UPSCALE_LIMITS, type UpscaleLimits } from './upscale-limits.js';

type OutputFormat = 'png' | 'jpeg' | 'webp';

const KERNELS: Record<Exclude<EmbeddedUpscalerName, 'None'>, keyof KernelEnum> = { Lanczos: 'lanczos3', Nearest: 'nearest' };

// Floating error must not cost a pixel: 3 * (10 / 3) is 9.999999999999998.
const EPSILON = 1e-9;

/**
 * The WebUI's three non-neural upscalers, run in-process with sharp (libvips), so upscaling works
 * without an image upstream:
 * - `None` returns the image at its own size whatever the factor, as the WebUI's None does (its
 *   postprocessing skips the upscale step); the image is still decoded and re-encoded, so what comes
 *   back is a checked image with its EXIF orientation applied and its metadata dropped.
 * - `Lanczos` (lanczos3) and `Nearest` scale by any factor > 0 (resize_mode 0, sizes floored as the
 *   WebUI's int() does) or to a target (resize_mode 1: cover and crop it, or keep the whole image
 *   scaled by the larger ratio). Unlike the WebUI they do not snap sizes to multiples of 8 with a
 *   second Lanczos pass, which would blur Nearest's exact blocks.
 * PNG, JPEG and WebP come in, and go out in the format they came in. Neural upscalers are refused
 * as not_available, never imitated by a resize; generation needs an sd-webui upstream.
 */
export class EmbeddedUpscaleEngine implements ImageEngine {
  readonly kind = 'embedded-upscale' as const;
  private readonly limits: UpscaleLimits;

  constructor(limits: Partial<UpscaleLimits> = {}) {
    this.limits = { ...UPSCALE_LIMITS, ...limits };
  }

  /** Whether a request is one the embedded upscalers can serve in full. */
  static serves(request: UpscaleRequest): boolean {
    return isEmbeddedUpscaler(request.upscaler_1 ?? 'None') && !secondUpscaler(request) && !faceRestoration(request);
  }

  async models(): Promise<string[]> {
    return [];
  }

  async checkpoints(): Promise<SdModel[]> {
    return [];
  }

  async samplers(): Promise<Sampler[]> {
    return [];
  }

  async upscalers(): Promise<Upscaler[]> {
    return EMBEDDED_UPSCALERS.map((name) => ({ name, neural: false, servedBy: this.kind }));
  }

  async options(): Promise<Record<string, unknown>> {
    throw noGeneration();
  }

  async progress(): Promise<ImageProgress> {
    throw noGeneration();
  }

  async txt2img(): Promise<ImageGenerationResponse> {
    throw noGeneration();
  }

  async img2img(): Promise<ImageGenerationResponse> {
    throw noGeneration();
  }

  async generate(): Promise<ImageGenerationStream> {
    throw noGeneration();
  }

  async health(): Promise<EngineHealth> {
    return { ok: true };
  }

  async close(): Promise<void> {}

  async upscale(request: UpscaleRequest, signal: AbortSignal): Promise<UpscaleResponse> {
    signal.throwIfAborted();
    const name = request.upscaler_1 ?? 'None';
    if (!isEmbeddedUpscaler(name)) throw notAvailable(name, 'upscaler_1');
    const second = secondUpscaler(request);
    if (second) {
      if (!isEmbeddedUpscaler(second)) throw notAvailable(second, 'upscaler_2');
      throw new ImageEngineError('invalid_request', 'Blending a second upscaler (extras_upscaler_2_visibility > 0) is not supported by the embedded upscalers', 'extras_upscaler_2_visibility');
    }
    const face = faceRestoration(request);
    if (face)
      throw new ImageEngineError('not_available', `Face restoration (${face === 'gfpgan_visibility' ? 'GFPGAN' : 'CodeFormer'}) is a neural model: it needs ${IMAGE_UPSTREAM_SETTING}`, face);

    const input = decodeBase64Image(request.image, 'image', this.limits.maxInputBytes);
    const { width, height, format } = await this.inspect(input);
    const pipeline = sharp(input, { failOn: 'error', limitInputPixels: this.limits.maxInputSide ** 2 }).autoOrient();
    let info = '';
    if (name !== 'None') {
      const kernel = KERNELS[name];
      const target = this.target(request, width, height);
      if (target.cover) pipeline.resize(target.width, target.height, { kernel, fit: 'cover', position: 'centre' });
      else pipeline.resize(target.width, target.height, { kernel, fit: 'fill' });
      info = `<p>${target.note}, Postprocess upscaler: ${name}</p>`;
    }
    const output = await encode(pipeline, format).catch((error: unknown) => {
      throw new ImageEngineError('invalid_request', `image could not be decoded (${(error as Error).message})`, 'image');
    });
    signal.throwIfAborted();
    return { image: output.toString('base64'), html_info: info };
  }

  private async inspect(input: Buffer): Promise<{ width: number; height: number; format: OutputFormat }> {
    let metadata: Metadata;
    try {
      metadata = await sharp(input, { failOn: 'error' }).metadata();
    } catch {
      throw new ImageEngineError('invalid_request', 'image is not a PNG, JPEG or WebP image', 'image');
    }
    const format = metadata.format;
    if (format !== 'png' && format !== 'jpeg' && format !== 'webp') throw new ImageEngineError('invalid_request', `image is ${String(format).toUpperCase()}; PNG, JPEG or WebP is accepted`, 'image');
    const { width, height } = metadata.autoOrient;
    const max = this.limits.maxInputSide;
    if (width > max || height > max) throw new ImageEngineError('invalid_request', `image is ${width}x${height}; the embedded upscalers take at most ${max}x${max}`, 'image');
    return { width, height, format };
  }

  private target(request: UpscaleRequest, width: number, height: number): { width: number; height: number; cover: boolean; note: string } {
    const mode = request.resize_mode ?? 0;
    let target: { width: number; height: number; cover: boolean; note: string };
    if (mode === 0) {
      const factor = request.upscaling_resize ?? 2;
      if (typeof factor !== 'number' || !Number.isFinite(factor) || factor <= 0) throw new ImageEngineError('invalid_request', 'upscaling_resize must be a number greater than 0', 'upscaling_resize');
      target = { width: scaled(width, factor), height: scaled(height, factor), cover: false, note: `Postprocess upscale by: ${factor}` };
    } else if (mode === 1) {
      const w = request.upscaling_resize_w ?? 512;
      const h = request.upscaling_resize_h ?? 512;
      for (const [param, value] of [['upscaling_resize_w', w], ['upscaling_resize_h', h]] as const)
        if (!Number.isInteger(value) || value < 1) throw new ImageEngineError('invalid_request', `${param} must be an integer of at least 1`, param);
      if (request.upscaling_crop ?? true) target = { width: w, height: h, cover: true, note: `Postprocess upscale to: ${w}x${h}, Postprocess crop to: ${w}x${h}` };
      else {
        const factor = Math.max(w / width, h / height);
        target = { width: scaled(width, factor), height: scaled(height, factor), cover: false, note: `Postprocess upscale to: ${w}x${h}` };
      }
    } else throw new ImageEngineError('invalid_request', 'resize_mode must be 0 (scale by upscaling_resize) or 1 (scale to upscaling_resize_w x upscaling_resize_h)', 'resize_mode');
    const max = this.limits.maxOutputSide;
    if (target.width > max || target.height > max)
      throw new ImageEngineError('invalid_request', `The upscaled image would be ${target.width}x${target.height}; at most ${max}x${max} is produced`, mode === 0 ? 'upscaling_resize' : 'upscaling_resize_w');
    return target;
  }
}

function scaled(side: number, factor: number): number {
  return Math.max(1, Math.floor(side * factor + EPSILON));
}

function encode(pipeline: Sharp, format: OutputFormat): Promise<Buffer> {
  if (format === 'jpeg') return pipeline.jpeg({ quality: 95 }).toBuffer();
  if (format === 'webp') return pipeline.webp({ quality: 95 }).toBuffer();
  return pipeline.png().toBuffer();
}

function secondUpscaler(request: UpscaleRequest): string | undefined {
  const name = request.upscaler_2;
  return name && name !== 'None' && (request.extras_upscaler_2_visibility ?? 0) > 0 ? name : undefined;
}

function faceRestoration(request: UpscaleRequest): 'gfpgan_visibility' | 'codeformer_visibility' | undefined {
  if ((request.gfpgan_visibility ?? 0) > 0) return 'gfpgan_visibility';
  if ((request.codeformer_visibility ?? 0) > 0) return 'codeformer_visibility';
  return undefined;
}

function notAvailable(name: string, param: string): ImageEngineError {
  return new ImageEngineError(
    'not_available',
    `The upscaler "${name}" is not available: the embedded upscalers are ${EMBEDDED_UPSCALERS.join(', ')}; neural upscalers (ESRGAN, R-ESRGAN, SwinIR, LDSR, ScuNET ...) need ${IMAGE_UPSTREAM_SETTING}`,
    param,
  );
}

function noGeneration(): ImageEngineError {
  return new ImageEngineError('unavailable', `Image generation is not configured: it needs ${IMAGE_UPSTREAM_SETTING}`);
}
