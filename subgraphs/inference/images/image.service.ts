import { IMAGE_UPSTREAM_SETTING, ImageEngineError, isEmbeddedUpscaler, type ImageGenerationStream, type Img2ImgRequest, type Txt2ImgRequest, type UpscaleRequest, type UpscaleResponse } from '../engine/image-engine.js';
import type { Capability } from '../config/inference-config.schema.js';
import { decodeBase64Image } from '../engines/upscale/base64-image.js';
import { UPSCALE_LIMITS } from '../engines/upscale/upscale-limits.js';
import { sniffImageFormat } from '../image-input/image-format.js';
import { ProviderRefusal } from '../provider-registry/provider-refusal.js';
import type { ProviderSlot } from '../provider-registry/provider-slots.js';
import type { OutcomeOf } from '../generation/generation.service.js';
import type { Caller } from '../protocol/caller.js';
import type { InferenceRuntime } from '../inference-context.js';
import type { ImageTarget, InterfaceName } from '../provider-registry/provider-registry.js';
import type { UsageInterface } from '../usage/usage-interface.js';

export interface ImageCall {
  interface: InterfaceName;
  usageInterface: UsageInterface;
  caller: Caller;
  provider?: string;
  signal: AbortSignal;
  outcomeOf: OutcomeOf;
}

/**
 * Image generation, editing and upscaling over the providers' image engines, for every image
 * interface: picks the first provider of the interface (or the one named) with an sd-webui engine,
 * holds its concurrency slot, applies the image timeout, and records each call (tokens 0, the
 * checkpoint or upscaler as the model). Without an image engine, generation is refused with the
 * setting to configure; the non-neural upscalers still run, embedded.
 */
export class ImageService {
  constructor(private readonly runtime: InferenceRuntime) {}

  /** The interface's image engine (of the provider named), if one of its providers has one and, asked, serves the capability. */
  engine(call: Pick<ImageCall, 'interface' | 'provider'>, capability?: Capability): ImageTarget | undefined {
    return this.runtime.registry.imageTargets({ interface: call.interface, provider: call.provider, capability })[0];
  }

  /** Text to image, answered as events (the images pass through in pieces); the slot, the deadline and the usage record last until the events end. */
  txt2img(call: ImageCall, request: Txt2ImgRequest): Promise<ImageGenerationStream> {
    return this.generate(call, 'txt2img', request);
  }

  img2img(call: ImageCall, request: Img2ImgRequest): Promise<ImageGenerationStream> {
    return this.generate(call, 'img2img', request);
  }

  /**
   * Upscales with the named upscaler: the three non-neural ones run embedded when no provider has
   * an image engine; a neural one needs an upstream that lists it (404 not_available otherwise).
   */
  async upscale(call: ImageCall, request: UpscaleRequest & { upscaler_1: string }): Promise<UpscaleResponse> {
    const startedAt = performance.now();
    const target = this.engine(call);
    // Without an image upstream the embedded engine answers: it runs None, Lanczos and Nearest and
    // refuses a neural name as not available, naming it (never a resize under a neural name).
    const engine = target?.engine ?? this.runtime.registry.embeddedUpscaler();
    const usage = { provider: target?.provider.id ?? 'embedded', model: request.upscaler_1, status: 200, errorCode: null as string | null, images: 0 };
    let slot: ProviderSlot | undefined;
    let timer: NodeJS.Timeout | undefined;
    try {
      // Only a neural upscaler on the upstream takes the provider's slot: no GPU queue for a resize.
      if (target && !isEmbeddedUpscaler(request.upscaler_1)) slot = this.runtime.registry.acquire(target.provider.id, call.signal);
      // The deadline aborts with the engine's own timeout error: the engine throws its signal's
      // reason, and AbortSignal.timeout's (a DOMException) would be answered as a 500.
      const deadline = new AbortController();
      timer = setTimeout(() => deadline.abort(new ImageEngineError('timeout', 'The image engine did not answer in time')), this.runtime.config.timeouts.imageGenerationMs);
      const answer = await engine.upscale(request, AbortSignal.any([call.signal, deadline.signal]));
      usage.images = 1;
      return answer;
    } catch (error) {
      ({ status: usage.status, code: usage.errorCode } = call.signal.aborted ? { status: 499, code: 'client_closed' } : call.outcomeOf(error));
      throw error;
    } finally {
      clearTimeout(timer);
      slot?.release();
      this.record(call, usage, startedAt);
    }
  }

  private async generate(call: ImageCall, operation: 'txt2img' | 'img2img', request: Txt2ImgRequest): Promise<ImageGenerationStream> {
    const startedAt = performance.now();
    const target = this.engine(call, operation);
    const named = request.sd_model_checkpoint ?? '';
    const usage = { provider: target?.provider.id ?? call.provider ?? '', model: named, status: 200, errorCode: null as string | null, images: 0 };
    const failed = (error: unknown) => {
      ({ status: usage.status, code: usage.errorCode } = call.signal.aborted ? { status: 499, code: 'client_closed' } : call.outcomeOf(error));
    };
    const record = () => this.record(call, usage, startedAt);
    let slot: ProviderSlot | undefined;
    let timer: NodeJS.Timeout | undefined;
    const settle = () => {
      clearTimeout(timer);
      slot?.release();
    };
    let events: ImageGenerationStream;
    try {
      if (operation === 'img2img') checkImages(request as Img2ImgRequest);
      if (!target) {
        // Not a passing failure: nothing here will ever serve it until the configuration changes.
        const who = call.provider ?? 'No provider of this interface';
        throw new ProviderRefusal('capability_not_served', `${who} does not serve ${operation}: it needs ${IMAGE_UPSTREAM_SETTING}`, call.provider !== undefined ? 'provider' : undefined);
      }
      slot = this.runtime.registry.acquire(target.provider.id, call.signal);
      const deadline = new AbortController();
      timer = setTimeout(() => deadline.abort(new ImageEngineError('timeout', 'The image engine did not answer in time')), this.runtime.config.timeouts.imageGenerationMs);
      events = await target.engine.generate(operation, request, AbortSignal.any([call.signal, deadline.signal]));
    } catch (error) {
      settle();
      failed(error);
      record();
      throw error;
    }
    return (async function* (): ImageGenerationStream {
      let ended = false;
      try {
        for await (const event of events) {
          if (event.type === 'image') usage.images++;
          if (event.type === 'done') {
            ended = true;
            // The model name the WebUI ran, which is how /v1/models lists it (a request may have named its title or hash).
            usage.model = checkpointOf(event.info) || named;
          }
          yield event;
        }
      } catch (error) {
        failed(error);
        throw error;
      } finally {
        settle();
        // Left before the end without an error: the client went away.
        if (!ended && usage.status === 200) Object.assign(usage, { status: 499, errorCode: 'client_closed' });
        await events.return(undefined);
        record();
      }
    })();
  }

  private record(call: ImageCall, usage: { provider: string; model: string; status: number; errorCode: string | null; images: number }, startedAt: number): void {
    this.runtime.usage.record({
      interface: call.usageInterface,
      provider: usage.provider,
      model: usage.model,
      accountId: call.caller.principal?.accountId ?? null,
      keyId: call.caller.principal?.keyId ?? null,
      clientAddress: call.caller.principal ? null : (call.caller.address ?? null),
      promptTokens: 0,
      completionTokens: 0,
      images: usage.images,
      latencyMs: performance.now() - startedAt,
      timeToFirstTokenMs: null,
      streamed: false,
      status: usage.status,
      errorCode: usage.errorCode,
    });
  }
}

/**
 * The images of an img2img request checked before any upstream sees them, as the upscalers check
 * theirs: base64 (a data: prefix allowed), within the size limit, and an image by its bytes. A
 * WebUI answers a bad one with a 500 of its own wording, which would reach the client as a 502.
 */
function checkImages(request: Img2ImgRequest): void {
  const images: [unknown, string][] = (Array.isArray(request.init_images) ? request.init_images : []).map((image, i) => [image, `init_images[${i}]`]);
  if (request.mask !== undefined) images.push([request.mask, 'mask']);
  for (const [image, param] of images) {
    const bytes = decodeBase64Image(image, param, UPSCALE_LIMITS.maxInputBytes);
    if (!sniffImageFormat(bytes)) throw new ImageEngineError('invalid_request', `${param} is not a PNG, JPEG, GIF, BMP, WebP or TIFF image`, param);
  }
}

/** The checkpoint a generation ran on, from the WebUI's info (sd_model_name); empty when it does not say. */
function checkpointOf(infoText: string): string {
  try {
    const info: unknown = JSON.parse(infoText);
    const name = info && typeof info === 'object' ? (info as { sd_model_name?: unknown }).sd_model_name : undefined;
    return typeof name === 'string' ? name : '';
  } catch {
    return '';
  }
}
