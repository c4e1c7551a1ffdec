import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import sharp, { type Sharp } from 'sharp';
import type { z } from 'zod';
import { EMBEDDED_UPSCALERS, IMAGE_UPSTREAM_SETTING, type Img2ImgRequest, type Txt2ImgRequest, type Upscaler } from '../engine/image-engine.js';
import type { InferenceRuntime } from '../inference-context.js';
import { outcomeFor, WireError } from '../protocol/wire-error.js';
import { parseWire } from '../protocol/wire-body.js';
import { USAGE_INTERFACE, type WireInterface } from '../protocol/wire-interface.js';
import type { WireCall, WireRoute } from '../protocol/wire-route.js';
import { IMAGE_DEFAULTS, img2imgSchema, openAiGenerationSchema, openAiUpscaleSchema, sizeOf, txt2imgSchema, upscaleSchema } from './image-request.js';
import { answerGeneration, openAiShape, webuiShape } from './image-answer.js';
import { ImageService, type ImageCall } from './image.service.js';
import { ProviderRefusal } from '../provider-registry/provider-refusal.js';

// Four 2048x2048 PNGs as base64 run to tens of megabytes.
const IMAGE_BODY_LIMIT = '80mb';
const EDIT_FILE_LIMIT = 25 * 1024 * 1024;

/** The neural upscaler one description names as upscale-img's default; used when an upstream offers it. */
const NEURAL_DEFAULT = 'ESRGAN_4x';

/**
 * The image paths of Service I (Stable-Diffusion-WebUI shapes, at the spec's /v1/... names and at
 * the WebUI's own /sdapi/v1/... names), of the keyless proxy (/api/<name> is Service I's
 * /sdapi/v1/<name>), and of the gateway (OpenAI's images API). Every one runs on ImageService.
 */
export function imageRoutes(runtime: InferenceRuntime, parallel: (iface: WireInterface, caller: WireCall['caller']) => { limit: number; inUse: number } | null): WireRoute[] {
  const service = new ImageService(runtime);
  const callOf = (wire: WireCall, provider?: string): ImageCall => ({
    interface: wire.iface,
    usageInterface: USAGE_INTERFACE[wire.iface],
    caller: wire.caller,
    ...(provider !== undefined ? { provider } : {}),
    signal: wire.signal,
    outcomeOf: outcomeFor(wire.iface),
  });

  const txt2img = async (wire: WireCall) => {
    const body = parseWire(wire.iface, txt2imgSchema, wire.req.body);
    await answerGeneration(wire, await service.txt2img(callOf(wire), withDefaults(body) as Txt2ImgRequest), webuiShape);
  };
  const img2img = async (wire: WireCall) => {
    const body = parseWire(wire.iface, img2imgSchema, wire.req.body);
    const request = { denoising_strength: IMAGE_DEFAULTS.denoising_strength, ...withDefaults(body) } as Img2ImgRequest;
    await answerGeneration(wire, await service.img2img(callOf(wire), request), webuiShape);
  };
  const upscale = (shape: 'spec' | 'webui') => async (wire: WireCall) => {
    const body = parseWire(wire.iface, upscaleSchema, wire.req.body);
    const upscaler = body.upscaler_1 ?? (await defaultUpscaler(wire));
    const answer = await service.upscale(callOf(wire), { ...body, upscaler_1: upscaler });
    // The spec reads the upscale answer like a generation's: images[0]; the WebUI's clients read `image`.
    wire.res.json(shape === 'spec' ? { images: [answer.image], info: answer.html_info, image: answer.image, html_info: answer.html_info } : { ...answer, images: [answer.image] });
  };
  const defaultUpscaler = async (wire: WireCall): Promise<string> => {
    const target = service.engine({ interface: wire.iface });
    const offered = target ? await target.engine.upscalers().catch(() => []) : [];
    return offered.some((u) => u.name === NEURAL_DEFAULT) ? NEURAL_DEFAULT : 'Lanczos';
  };

  const sdModels = async (wire: WireCall) => {
    const target = service.engine({ interface: wire.iface });
    // The spec: "an array of model name strings".
    wire.res.json(target ? await target.engine.models() : []);
  };
  const samplers = async (wire: WireCall) => {
    const target = service.engine({ interface: wire.iface });
    wire.res.json(target ? await target.engine.samplers() : []);
  };
  const upscalers = async (wire: WireCall) => {
    const target = service.engine({ interface: wire.iface });
    const listed: Upscaler[] = target ? await target.engine.upscalers() : await runtime.registry.embeddedUpscaler().upscalers();
    // The WebUI's entry shape, with which engine runs it.
    wire.res.json(listed.map((u) => ({ name: u.name, model_name: null, model_path: null, model_url: null, scale: u.scale ?? null, neural: u.neural, served_by: u.servedBy })));
  };
  const options = async (wire: WireCall) => {
    const target = service.engine({ interface: wire.iface });
    wire.res.json({
      defaults: { ...IMAGE_DEFAULTS, upscaler_1: `${NEURAL_DEFAULT} when the upstream offers it, else Lanczos` },
      limits: { steps: [1, 150], width: [64, 2048], height: [64, 2048], cfg_scale: [1, 20], batch_size: [1, 4], denoising_strength: [0, 1] },
      image_generation: target ? { provider: target.provider.id } : { provider: null, why: 'no provider of this interface has an sd-webui engine' },
      embedded_upscalers: EMBEDDED_UPSCALERS,
      upstream: target ? await target.engine.options() : null,
    });
  };
  const webuiOptions = async (wire: WireCall) => {
    const target = service.engine({ interface: wire.iface });
    wire.res.json(target ? await target.engine.options() : {});
  };
  const progress = async (wire: WireCall) => {
    const target = service.engine({ interface: wire.iface });
    if (!target) throw new ProviderRefusal('capability_not_served', `No provider of this interface generates images: it needs ${IMAGE_UPSTREAM_SETTING}`);
    wire.res.json(await target.engine.progress());
  };
  const parallelRequests = async (wire: WireCall) => {
    const mine = parallel(wire.iface, wire.caller);
    wire.res.json({
      limit: mine?.limit ?? null,
      in_use: mine?.inUse ?? null,
      providers: runtime.registry.status().map((r) => ({ id: r.id, in_flight: r.inFlight, max_concurrency: r.maxConcurrency })),
    });
  };

  // OpenAI's images API on the gateway: {created, data: [{b64_json}]}.
  const created = () => Math.floor(Date.now() / 1000);
  const generations = async (wire: WireCall) => {
    const body = parseWire(wire.iface, openAiGenerationSchema, wire.req.body);
    const size = sizeOf(body.size);
    if ('error' in size) throw new WireError(422, 'invalid_value', size.error, 'size');
    const events = await service.txt2img(callOf(wire, body.provider), {
      prompt: body.prompt,
      ...(body.negative_prompt !== undefined ? { negative_prompt: body.negative_prompt } : {}),
      ...(body.model !== undefined ? { sd_model_checkpoint: body.model } : {}),
      width: size.width,
      height: size.height,
      batch_size: body.n ?? 1,
      steps: body.steps ?? IMAGE_DEFAULTS.steps,
      cfg_scale: body.cfg_scale ?? IMAGE_DEFAULTS.cfg_scale,
      sampler_name: body.sampler_name ?? IMAGE_DEFAULTS.sampler_name,
      seed: body.seed ?? -1,
    });
    await answerGeneration(wire, events, openAiShape(created(), body.prompt));
  };
  const edits = async (wire: WireCall) => {
    const form = await readForm(wire);
    const image = form.getAll('image[]').concat(form.getAll('image'))[0];
    if (!(image instanceof File)) throw new WireError(400, 'missing_parameter', "Missing required parameter: 'image' (a file)", 'image');
    const prompt = form.get('prompt');
    if (typeof prompt !== 'string' || !prompt) throw new WireError(400, 'missing_parameter', "Missing required parameter: 'prompt'", 'prompt');
    for (const name of form.keys()) {
      if (!['image', 'image[]', 'mask', 'prompt', 'n', 'size', 'model', 'provider', 'response_format', 'user'].includes(name)) {
        throw new WireError(400, 'unknown_parameter', `Unrecognized request argument supplied: ${name}`, name);
      }
    }
    const n = form.get('n') === null ? 1 : Number(form.get('n'));
    if (!Number.isInteger(n) || n < 1 || n > 4) throw new WireError(422, 'invalid_value', 'n must be an integer from 1 to 4', 'n');
    if (form.get('response_format') !== null && form.get('response_format') !== 'b64_json') throw new WireError(422, 'invalid_value', 'response_format must be b64_json: the platform keeps no image files to link to', 'response_format');
    const size = sizeOf((form.get('size') as string | null) ?? undefined);
    if ('error' in size) throw new WireError(422, 'invalid_value', size.error, 'size');
    const imageBytes = Buffer.from(await image.arrayBuffer());
    const maskFile = form.get('mask');
    // OpenAI's mask: fully transparent pixels mark what to edit (of the mask, or of the image
    // itself without one). The WebUI's: white repaints. Converted here; no alpha, no mask (the
    // whole image is reworked).
    const mask = await maskFromAlpha(maskFile instanceof File ? Buffer.from(await maskFile.arrayBuffer()) : imageBytes, maskFile instanceof File ? 'mask' : 'image');
    const model = form.get('model');
    const provider = form.get('provider');
    const events = await service.img2img(callOf(wire, typeof provider === 'string' ? provider : undefined), {
      prompt,
      init_images: [imageBytes.toString('base64')],
      ...(mask ? { mask } : {}),
      ...(typeof model === 'string' && model ? { sd_model_checkpoint: model } : {}),
      width: size.width,
      height: size.height,
      batch_size: n,
      steps: IMAGE_DEFAULTS.steps,
      cfg_scale: IMAGE_DEFAULTS.cfg_scale,
      sampler_name: IMAGE_DEFAULTS.sampler_name,
      denoising_strength: IMAGE_DEFAULTS.denoising_strength,
      seed: -1,
    });
    await answerGeneration(wire, events, openAiShape(created()));
  };
  const gatewayUpscale = async (wire: WireCall) => {
    const body = parseWire(wire.iface, openAiUpscaleSchema, wire.req.body);
    const upscaler = body.upscaler ?? (await defaultUpscaler(wire));
    const answer = await service.upscale(callOf(wire, body.provider), { image: body.image, upscaler_1: upscaler, upscaling_resize: body.scale ?? 2 });
    wire.res.json({ created: created(), data: [{ b64_json: answer.image }], upscaler });
  };

  const I: readonly WireInterface[] = ['serviceI'];
  const P: readonly WireInterface[] = ['proxy'];
  const G: readonly WireInterface[] = ['gateway'];
  const big = { bodyLimit: IMAGE_BODY_LIMIT };
  return [
    { method: 'POST', path: '/v1/txt2img', interfaces: I, summary: 'Text to image (Stable-Diffusion-WebUI txt2img shape)', handle: txt2img, ...big },
    { method: 'POST', path: '/v1/img2img', interfaces: I, summary: 'Image to image and inpainting (WebUI img2img shape)', handle: img2img, ...big },
    { method: 'POST', path: '/v1/upscale-img', interfaces: I, summary: 'Upscale one image: {images: [base64]}', handle: upscale('spec'), ...big },
    { method: 'GET', path: '/sdapi/v1/sd-models', interfaces: I, summary: 'Image models: an array of names', handle: sdModels },
    { method: 'GET', path: '/v1/img-samplers', interfaces: I, summary: 'Samplers (WebUI shape)', handle: samplers },
    { method: 'GET', path: '/v1/upscalers', interfaces: I, summary: 'Upscalers (WebUI shape, with which engine runs each)', handle: upscalers },
    { method: 'GET', path: '/v1/img-options', interfaces: I, summary: 'Defaults, limits and the upstream options', handle: options },
    { method: 'GET', path: '/v1/parallel-requests', interfaces: I, summary: 'Parallel requests in use and the limit for this key, and per provider', handle: parallelRequests },
    // The WebUI's own paths on Service I, which the proxy's /api/<name> maps to.
    ...(
      [
        ['/sdapi/v1/txt2img', txt2img, 'POST'],
        ['/sdapi/v1/img2img', img2img, 'POST'],
        ['/sdapi/v1/extra-single-image', upscale('webui'), 'POST'],
        ['/sdapi/v1/samplers', samplers, 'GET'],
        ['/sdapi/v1/upscalers', upscalers, 'GET'],
        ['/sdapi/v1/options', webuiOptions, 'GET'],
        ['/sdapi/v1/progress', progress, 'GET'],
      ] as const
    ).flatMap(([path, handle, method]): WireRoute[] => [
      { method, path, interfaces: I, summary: `WebUI ${path}`, handle, ...(method === 'POST' ? big : {}) },
      { method, path: path.replace('/sdapi/v1/', '/api/'), interfaces: P, summary: `Service I ${path}, without a key`, handle, ...(method === 'POST' ? big : {}) },
    ]),
    { method: 'GET', path: '/api/sd-models', interfaces: P, summary: 'Service I /sdapi/v1/sd-models, without a key', handle: sdModels },
    { method: 'POST', path: '/v1/images/generations', interfaces: G, summary: "Image generation (OpenAI's images API; provider_d advised)", handle: generations, ...big },
    { method: 'POST', path: '/v1/images/edits', interfaces: G, summary: "Image editing (OpenAI's images API, multipart: image, mask, prompt, n, size)", handle: edits, multipart: true },
    { method: 'POST', path: '/v1/images/upscale', interfaces: G, summary: 'Image upscaling: {image, upscaler?, scale?} answered as {created, data: [{b64_json}]}', handle: gatewayUpscale, ...big },
  ];
}

/** The spec's defaults where the body leaves them out (the upstream's own would differ: width 512). */
function withDefaults<T extends Record<string, unknown>>(body: T): T {
  return {
    steps: IMAGE_DEFAULTS.steps,
    width: IMAGE_DEFAULTS.width,
    height: IMAGE_DEFAULTS.height,
    cfg_scale: IMAGE_DEFAULTS.cfg_scale,
    batch_size: IMAGE_DEFAULTS.batch_size,
    sampler_name: IMAGE_DEFAULTS.sampler_name,
    seed: IMAGE_DEFAULTS.seed,
    ...body,
  };
}


/** A multipart body, read by the platform's own fetch implementation, within a size limit. */
async function readForm(wire: WireCall): Promise<FormData> {
  const type = wire.req.headers['content-type'] ?? '';
  if (!type.startsWith('multipart/form-data')) throw new WireError(400, 'invalid_body', 'images/edits takes multipart/form-data (image, mask, prompt, n, size)');
  let seen = 0;
  const limited = Readable.from(
    (async function* () {
      for await (const chunk of wire.req as AsyncIterable<Buffer>) {
        seen += chunk.length;
        if (seen > EDIT_FILE_LIMIT * 2) throw new WireError(413, 'payload_too_large', `The request body is larger than ${(EDIT_FILE_LIMIT * 2) / 1024 / 1024} MB`);
        yield chunk;
      }
    })(),
  );
  try {
    return await new Request('http://form.invalid', { method: 'POST', headers: { 'content-type': type }, body: Readable.toWeb(limited) as WebReadableStream as never, duplex: 'half' } as RequestInit).formData();
  } catch (error) {
    if (error instanceof WireError) throw error;
    throw new WireError(400, 'invalid_body', `The multipart body cannot be read: ${(error as Error).message}`);
  }
}

/** The WebUI mask (white repaints) from an image's alpha channel (transparent = edit), or none without alpha. */
async function maskFromAlpha(bytes: Buffer, param: string): Promise<string | undefined> {
  let image: Sharp;
  let channels: number;
  try {
    image = sharp(bytes);
    ({ channels } = await image.metadata() as { channels: number });
  } catch {
    throw new WireError(400, 'invalid_value', `The ${param} is not a PNG, JPEG or WebP image`, param);
  }
  if (channels !== 4 && channels !== 2) return undefined;
  const mask = await image.extractChannel('alpha').negate().png().toBuffer();
  return mask.toString('base64');
}
