import type { EngineHealth } from './text-engine.js';

/**
 * The contract between the image interfaces (Service I's image paths, the keyless proxy's /api/*,
 * the gateway's images API, GraphQL) and the engines behind providers: a Stable-Diffusion-WebUI
 * upstream (AUTOMATIC1111, Forge, SD.Next) and the embedded non-neural upscalers. Requests and
 * answers keep the WebUI API's shapes (/sdapi/v1/txt2img, img2img, extra-single-image, ...), so an
 * interface that speaks that API passes them through; interfaces check ranges and defaults and map
 * ImageEngineError reasons to their statuses. Engines never invent an image: what they cannot do
 * they refuse.
 */

export type ImageEngineKind = 'sd-webui' | 'embedded-upscale';

/**
 * The fields of /sdapi/v1/txt2img an engine knows by name. Other WebUI fields a proxy lets through
 * (alwayson_scripts, script_name, hr_* ...) travel as they are under the index signature.
 */
export interface Txt2ImgRequest {
  prompt: string;
  negative_prompt?: string;
  styles?: string[];
  /** -1 (or absent) lets the upstream pick; the seed used is in `info`. */
  seed?: number;
  subseed?: number;
  subseed_strength?: number;
  sampler_name?: string;
  scheduler?: string;
  batch_size?: number;
  n_iter?: number;
  steps?: number;
  cfg_scale?: number;
  width?: number;
  height?: number;
  restore_faces?: boolean;
  tiling?: boolean;
  denoising_strength?: number;
  /**
   * The spec's top-level checkpoint name (title, model_name or hash). Engines send it the WebUI's
   * way, as `override_settings.sd_model_checkpoint`, after checking the upstream lists it.
   */
  sd_model_checkpoint?: string;
  override_settings?: Record<string, unknown>;
  override_settings_restore_afterwards?: boolean;
  send_images?: boolean;
  save_images?: boolean;
  [field: string]: unknown;
}

/**
 * /sdapi/v1/img2img. Mask polarity is the WebUI's: white marks the area to repaint, black keeps the
 * original; `inpainting_mask_invert: 1` flips it (black repaints), so a client of the other
 * description sends that flag or the interface sets it by its documented default.
 */
export interface Img2ImgRequest extends Txt2ImgRequest {
  /** Base64 images (a data: URI prefix is accepted, as the WebUI accepts it). */
  init_images: string[];
  /** 0 just resize, 1 crop and resize, 2 resize and fill, 3 just resize (latent upscale). */
  resize_mode?: number;
  image_cfg_scale?: number;
  mask?: string;
  mask_blur?: number;
  mask_blur_x?: number;
  mask_blur_y?: number;
  /** 0 fill, 1 original, 2 latent noise, 3 latent nothing. */
  inpainting_fill?: number;
  inpaint_full_res?: boolean;
  inpaint_full_res_padding?: number;
  /** 0: white repaints (the WebUI's default); 1: black repaints. */
  inpainting_mask_invert?: 0 | 1;
  initial_noise_multiplier?: number;
  include_init_images?: boolean;
}

/** The answer of txt2img and img2img, as the WebUI gives it. */
export interface ImageGenerationResponse {
  /** Base64 images (PNG unless the upstream's samples_format says otherwise). */
  images: string[];
  /** The request as the upstream read it, with its defaults filled in. */
  parameters: Record<string, unknown>;
  /** A JSON string: seed, all_seeds, infotexts, sd_model_name ... */
  info: string;
}

/**
 * A generation's answer as it arrives, so that images pass through without being held whole:
 * `image` starts the next image, `chunk` carries a piece of its base64 text, `done` ends the
 * answer with the small rest of it. An engine checks the answer's shape as it reads it and
 * throws (ImageEngineError upstream_error) where it stops making sense.
 */
export type ImageGenerationEvent = { type: 'image' } | { type: 'chunk'; text: string } | { type: 'done'; parameters: Record<string, unknown>; info: string };

export type ImageGenerationStream = AsyncGenerator<ImageGenerationEvent, void, undefined>;

/** A whole answer from its events (engine tests and small answers). */
export async function collectGeneration(events: AsyncIterable<ImageGenerationEvent>): Promise<ImageGenerationResponse> {
  const images: string[] = [];
  let current: string[] | null = null;
  for await (const event of events) {
    if (event.type === 'chunk') current?.push(event.text);
    else {
      if (current) images.push(current.join(''));
      current = [];
      if (event.type === 'done') return { images, parameters: event.parameters, info: event.info };
    }
  }
  throw new ImageEngineError('upstream_error', 'The image engine ended its answer early');
}

/** /sdapi/v1/extra-single-image (the spec's upscale-img): an image and how to scale it. */
export interface UpscaleRequest {
  /** Base64 image (a data: URI prefix is accepted). */
  image: string;
  /** 0 scale by upscaling_resize; 1 scale to upscaling_resize_w x upscaling_resize_h. */
  resize_mode?: 0 | 1;
  /** The factor for resize_mode 0; the WebUI's default is 2. */
  upscaling_resize?: number;
  /** The target for resize_mode 1; the WebUI's defaults are 512 x 512. */
  upscaling_resize_w?: number;
  upscaling_resize_h?: number;
  /** resize_mode 1: cover the target and crop the overflow (default) or keep the whole scaled image. */
  upscaling_crop?: boolean;
  /** The upscaler's name; the WebUI's default is "None" (the spec's one description: ESRGAN_4x). */
  upscaler_1?: string;
  upscaler_2?: string;
  extras_upscaler_2_visibility?: number;
  gfpgan_visibility?: number;
  codeformer_visibility?: number;
  codeformer_weight?: number;
  upscale_first?: boolean;
  show_extras_results?: boolean;
}

/** The answer of extra-single-image; the spec's upscale-img reads it as `{images: [image]}`. */
export interface UpscaleResponse {
  image: string;
  html_info: string;
}

/** An entry of /sdapi/v1/sd-models. */
export interface SdModel {
  title: string;
  model_name: string;
  hash: string | null;
  sha256: string | null;
  filename: string;
  config: string | null;
}

/** An entry of /sdapi/v1/samplers. */
export interface Sampler {
  name: string;
  aliases: string[];
  options: Record<string, unknown>;
}

export interface Upscaler {
  name: string;
  /** The factor the upscaler's model is trained for; absent for the embedded ones (any factor). */
  scale?: number;
  /** A neural model (ESRGAN, SwinIR, LDSR ...): served only by an upstream, never imitated by a resize. */
  neural: boolean;
  /** Who runs it: the embedded upscalers (sharp) or the sd-webui upstream. */
  servedBy: ImageEngineKind;
}

/** /sdapi/v1/progress: the upstream's current job (it runs one at a time). */
export interface ImageProgress {
  progress: number;
  eta_relative: number;
  state: Record<string, unknown>;
  current_image: string | null;
  textinfo: string | null;
}

export interface ImageEngine {
  readonly kind: ImageEngineKind;
  /** The checkpoints' model names (the spec's sd-models listing: an array of names). */
  models(): Promise<string[]>;
  /** The checkpoints as the WebUI lists them. */
  checkpoints(): Promise<SdModel[]>;
  samplers(): Promise<Sampler[]>;
  upscalers(): Promise<Upscaler[]>;
  /** The upstream's /sdapi/v1/options (current settings and defaults). */
  options(): Promise<Record<string, unknown>>;
  progress(): Promise<ImageProgress>;
  /** `signal` aborts when the client goes away: the engine drops the request and stops the upstream's job. */
  txt2img(request: Txt2ImgRequest, signal: AbortSignal): Promise<ImageGenerationResponse>;
  img2img(request: Img2ImgRequest, signal: AbortSignal): Promise<ImageGenerationResponse>;
  /**
   * The same generations, answered as events once the upstream accepted the request (its
   * refusals still throw here). Returning the events early, or `signal` aborting, drops the
   * upstream's answer and stops its job.
   */
  generate(operation: 'txt2img' | 'img2img', request: Txt2ImgRequest | Img2ImgRequest, signal: AbortSignal): Promise<ImageGenerationStream>;
  upscale(request: UpscaleRequest, signal: AbortSignal): Promise<UpscaleResponse>;
  health(): Promise<EngineHealth>;
  close(): Promise<void>;
}

/**
 * Why an image engine could not answer. Interfaces map the reason to their status:
 * `invalid_request` 400 (with `param`), `model_not_found` 404 (param sd_model_checkpoint),
 * `not_available` 404 (a neural upscaler without an upstream, an unknown upscaler: param names the
 * field, the message the upscaler), `upstream_error` 502, `unavailable` 503 (no upstream configured,
 * unreachable, busy, closing; the message names the setting where one is missing), `timeout` 503.
 */
export type ImageEngineErrorReason = 'invalid_request' | 'model_not_found' | 'not_available' | 'upstream_error' | 'unavailable' | 'timeout';

export class ImageEngineError extends Error {
  constructor(
    readonly reason: ImageEngineErrorReason,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'ImageEngineError';
  }
}

/** The WebUI's non-neural upscalers, which the embedded engine runs with sharp. */
export const EMBEDDED_UPSCALERS = ['None', 'Lanczos', 'Nearest'] as const;

export type EmbeddedUpscalerName = (typeof EMBEDDED_UPSCALERS)[number];

export function isEmbeddedUpscaler(name: string): name is EmbeddedUpscalerName {
  return (EMBEDDED_UPSCALERS as readonly string[]).includes(name);
}

/** The setting that enables image generation, named in refusals. */
export const IMAGE_UPSTREAM_SETTING = "an engine {type: 'sd-webui', url} in the provider's engines (INFERENCE_CONFIG)";
