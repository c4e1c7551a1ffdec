import type { Logger } from 'pino';
import type { EngineConfig, SdWebuiEngineConfig } from '../config/inference-config.js';
import type { ImageEngine } from '../engine/image-engine.js';
import type { TextEngine } from '../engine/text-engine.js';
import { LlamaEngine } from '../engines/llama/llama-engine.js';
import { OcrEngine } from '../engines/ocr/ocr-engine.js';
import { OpenAiUpstreamEngine } from '../engines/openai-upstream/openai-upstream-engine.js';
import { SdWebuiEngine } from '../engines/sd-webui/sd-webui-engine.js';
import { CombinedImageEngine } from '../engines/upscale/combined-image-engine.js';
import { EmbeddedUpscaleEngine } from '../engines/upscale/embedded-upscale-engine.js';

/**
 * An engine entry of a provider: a running text engine, or none for text (`unavailable` says why)
 * with, for an sd-webui entry, its image engine (the upstream plus the embedded upscalers).
 */
export type PooledEngine =
  | { config: EngineConfig; engine: TextEngine; imageEngine?: undefined }
  | { config: EngineConfig; engine: null; unavailable: string; imageEngine?: ImageEngine };

// The same options in any key order are the same engine.
function engineKey(config: EngineConfig): string {
  const sorted = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value as Record<string, unknown>)
          .filter(([, v]) => v !== undefined)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([k, v]) => [k, sorted(v)]))
      : value;
  return JSON.stringify(sorted(config));
}

/**
 * The engines of every provider, one instance per distinct engine entry: providers whose entries
 * are identical (the default configuration puts {type:'llama'} and {type:'ocr'} on all four)
 * share one LlamaEngine per models folder and one OcrEngine, so a model is loaded once and its
 * sequences are shared.
 */
export class EnginePool {
  private readonly engines = new Map<string, PooledEngine>();

  /** `logger` is where the upstream engines log what their upstreams said (bodies included). */
  constructor(private readonly logger?: Logger) {}

  /** The engine for an entry, made on first use. */
  get(config: EngineConfig): PooledEngine {
    const key = engineKey(config);
    let pooled = this.engines.get(key);
    if (!pooled) {
      pooled = this.create(config);
      this.engines.set(key, pooled);
    }
    return pooled;
  }

  /** Every distinct running engine. */
  running(): TextEngine[] {
    return [...this.engines.values()].flatMap((pooled) => (pooled.engine ? [pooled.engine] : []));
  }

  /** Every distinct image engine (one per distinct sd-webui entry). */
  runningImage(): ImageEngine[] {
    return [...this.engines.values()].flatMap((pooled) => (pooled.imageEngine ? [pooled.imageEngine] : []));
  }

  async close(): Promise<void> {
    const engines: (TextEngine | ImageEngine)[] = [...this.running(), ...this.runningImage()];
    this.engines.clear();
    await Promise.all(engines.map((engine) => engine.close()));
  }

  private imageEngine(config: SdWebuiEngineConfig): CombinedImageEngine {
    const logger = this.logger?.child({ engine: 'sd-webui', upstream: new URL(config.url).origin });
    return new CombinedImageEngine(new SdWebuiEngine({ baseUrl: config.url, timeouts: config.timeouts, ...(logger ? { logger } : {}) }), new EmbeddedUpscaleEngine(), logger);
  }

  private create(config: EngineConfig): PooledEngine {
    switch (config.type) {
      case 'llama':
        return { config, engine: new LlamaEngine({ modelsDir: config.modelsDir, sequences: config.sequences, contextSize: config.contextSize, threads: config.threads }) };
      case 'ocr':
        return {
          config,
          engine: new OcrEngine({
            maxImageBytes: config.maxImageBytes,
            imageFetchTimeoutMs: config.imageFetchTimeoutMs,
            allowPrivateImageUrls: config.allowPrivateImageUrls,
            workers: config.workers,
          }),
        };
      case 'openai-upstream':
        return {
          config,
          engine: new OpenAiUpstreamEngine({
            baseUrl: config.url,
            ...(config.apiKey ? { apiKey: config.apiKey } : {}),
            flavour: config.flavour,
            timeouts: config.timeouts,
            ...(config.connections ? { connections: config.connections } : {}),
            ...(config.tools !== undefined ? { tools: config.tools } : {}),
            maxImageBytes: config.maxImageBytes,
            imageFetchTimeoutMs: config.imageFetchTimeoutMs,
            allowPrivateImageUrls: config.allowPrivateImageUrls,
            ...(this.logger ? { logger: this.logger.child({ engine: 'openai-upstream', upstream: new URL(config.url).origin }) } : {}),
          }),
        };
      case 'sd-webui':
        return {
          config,
          engine: null,
          unavailable: 'the sd-webui engine serves images, not text',
          imageEngine: this.imageEngine(config),
        };
    }
  }
}
