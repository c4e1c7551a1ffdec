import type { Logger } from 'pino';
import type {
  ImageGenerationStream,
  ImageEngine,
  ImageGenerationResponse,
  ImageProgress,
  Img2ImgRequest,
  Sampler,
  SdModel,
  Txt2ImgRequest,
  Upscaler,
  UpscaleRequest,
  UpscaleResponse,
} from '../../engine/image-engine.js';
import { isEmbeddedUpscaler } from '../../engine/image-engine.js';
import type { EngineHealth } from '../../engine/text-engine.js';
import { EmbeddedUpscaleEngine } from './embedded-upscale-engine.js';

/**
 * What a provider with an sd-webui engine serves: generation, listings and neural upscalers from the
 * upstream, and None, Lanczos and Nearest from the embedded upscalers. Those three stay embedded
 * even with an upstream: they cost no GPU and do not wait in the WebUI's one-job-at-a-time queue.
 * An interface asks `upscale` with any name and the right engine answers.
 */
export class CombinedImageEngine implements ImageEngine {
  readonly kind: ImageEngine['kind'];

  constructor(
    readonly upstream: ImageEngine,
    readonly embedded: EmbeddedUpscaleEngine = new EmbeddedUpscaleEngine(),
    private readonly logger?: Logger,
  ) {
    this.kind = upstream.kind;
  }

  models(): Promise<string[]> {
    return this.upstream.models();
  }

  checkpoints(): Promise<SdModel[]> {
    return this.upstream.checkpoints();
  }

  samplers(): Promise<Sampler[]> {
    return this.upstream.samplers();
  }

  /** The embedded three, then the upstream's neural ones; only the embedded three while the upstream cannot list. */
  async upscalers(): Promise<Upscaler[]> {
    const embedded = await this.embedded.upscalers();
    let upstream: Upscaler[];
    try {
      upstream = await this.upstream.upscalers();
    } catch (error) {
      this.logger?.warn({ err: error }, 'the image upstream could not list its upscalers');
      return embedded;
    }
    return [...embedded, ...upstream.filter((upscaler) => !isEmbeddedUpscaler(upscaler.name))];
  }

  options(): Promise<Record<string, unknown>> {
    return this.upstream.options();
  }

  progress(): Promise<ImageProgress> {
    return this.upstream.progress();
  }

  txt2img(request: Txt2ImgRequest, signal: AbortSignal): Promise<ImageGenerationResponse> {
    return this.upstream.txt2img(request, signal);
  }

  img2img(request: Img2ImgRequest, signal: AbortSignal): Promise<ImageGenerationResponse> {
    return this.upstream.img2img(request, signal);
  }

  generate(operation: 'txt2img' | 'img2img', request: Txt2ImgRequest | Img2ImgRequest, signal: AbortSignal): Promise<ImageGenerationStream> {
    return this.upstream.generate(operation, request, signal);
  }

  upscale(request: UpscaleRequest, signal: AbortSignal): Promise<UpscaleResponse> {
    return EmbeddedUpscaleEngine.serves(request) ? this.embedded.upscale(request, signal) : this.upstream.upscale(request, signal);
  }

  health(): Promise<EngineHealth> {
    return this.upstream.health();
  }

  async close(): Promise<void> {
    await Promise.all([this.upstream.close(), this.embedded.close()]);
  }
}
