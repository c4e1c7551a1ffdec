import { z } from 'zod';

/**
 * The image bodies of Service I and its proxy, in the Stable-Diffusion-WebUI API's shape, with the
 * spec's ranges (steps 1-150, width and height 64-2048, cfg_scale 1-20, batch_size 1-4,
 * denoising_strength 0-1, seed -1 for random). Fields the spec does not list but the WebUI takes
 * (hr_*, alwayson_scripts, scheduler, ...) pass through to the upstream, which honours them:
 * clients written against the WebUI send them.
 *
 * Where the spec's two descriptions disagree, the WebUI's behaviour decides, since it is the wire
 * format those clients know: steps default 20 (the other description says 30), sampler "Euler a",
 * sd_model_checkpoint optional (the upstream's loaded checkpoint when absent). Width and height
 * default to 1024, which both descriptions give (the WebUI's own default is 512).
 */

const steps = z.int().min(1).max(150);
const side = z.int().min(64).max(2048);
const base64 = z.string().min(1);

export const IMAGE_DEFAULTS = { steps: 20, width: 1024, height: 1024, cfg_scale: 7, batch_size: 1, sampler_name: 'Euler a', seed: -1, denoising_strength: 0.75 } as const;

const generation = {
  prompt: z.string().max(10_000),
  negative_prompt: z.string().max(10_000).optional(),
  sd_model_checkpoint: z.string().min(1).max(512).optional(),
  steps: steps.optional(),
  sampler_name: z.string().min(1).max(128).optional(),
  width: side.optional(),
  height: side.optional(),
  seed: z.int().min(-1).max(0xffffffff).optional(),
  cfg_scale: z.number().min(1).max(20).optional(),
  batch_size: z.int().min(1).max(4).optional(),
  n_iter: z.int().min(1).max(4).optional(),
};

export const txt2imgSchema = z.looseObject(generation);

export const img2imgSchema = z.looseObject({
  ...generation,
  init_images: z.array(base64).min(1).max(4),
  denoising_strength: z.number().min(0).max(1).optional(),
  mask: base64.optional(),
  mask_blur: z.int().min(0).max(64).optional(),
  // The WebUI's flag: 1 makes black the area to repaint (the other description's polarity).
  inpainting_mask_invert: z.union([z.literal(0), z.literal(1)]).optional(),
});

/** The spec's upscale-img: an image and an upscaler (the WebUI's extra-single-image fields pass too). */
export const upscaleSchema = z.looseObject({
  image: base64,
  upscaler_1: z.string().min(1).max(128).optional(),
  upscaling_resize: z.number().gt(0).max(8).optional(),
  resize_mode: z.union([z.literal(0), z.literal(1)]).optional(),
  upscaling_resize_w: z.int().min(1).max(8192).optional(),
  upscaling_resize_h: z.int().min(1).max(8192).optional(),
});

/** OpenAI's images API, as the gateway takes it: POST /v1/images/generations. */
export const openAiGenerationSchema = z.strictObject({
  prompt: z.string().min(1).max(10_000),
  model: z.string().min(1).max(512).optional(),
  n: z.int().min(1).max(4).optional(),
  size: z.string().regex(/^\d{2,4}x\d{2,4}$/, 'must be <width>x<height>, e.g. 1024x1024').optional(),
  provider: z.string().min(1).max(64).optional(),
  // Only base64: the platform keeps no image files to link to.
  response_format: z.literal('b64_json').optional(),
  negative_prompt: z.string().max(10_000).optional(),
  seed: z.int().min(-1).max(0xffffffff).optional(),
  steps: steps.optional(),
  cfg_scale: z.number().min(1).max(20).optional(),
  sampler_name: z.string().min(1).max(128).optional(),
  user: z.string().max(256).optional(),
});

/** POST /v1/images/upscale on the gateway (not an OpenAI endpoint: its shape is ours, answered like images). */
export const openAiUpscaleSchema = z.strictObject({
  image: base64,
  upscaler: z.string().min(1).max(128).optional(),
  scale: z.number().gt(0).max(8).optional(),
  provider: z.string().min(1).max(64).optional(),
  response_format: z.literal('b64_json').optional(),
});

/** The width and height of an OpenAI `size`, each within the spec's 64-2048. */
export function sizeOf(size: string | undefined): { width: number; height: number } | { error: string } {
  if (size === undefined) return { width: IMAGE_DEFAULTS.width, height: IMAGE_DEFAULTS.height };
  const [width, height] = size.split('x').map(Number) as [number, number];
  if (width < 64 || width > 2048 || height < 64 || height > 2048) return { error: 'size must be between 64x64 and 2048x2048' };
  return { width, height };
}
