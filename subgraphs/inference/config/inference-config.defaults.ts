import type { InferenceConfigFile } from './inference-config.schema.js';

/** Timeouts when the file names none: the spec's 30 s for listings and 300 s for image generation. */
export const DEFAULT_TIMEOUTS = { generationMs: 120_000, listingMs: 30_000, imageGenerationMs: 300_000 } as const;

/** The spec's parallel limit for Service I and its proxy (a seventh request is 429). */
export const DEFAULT_MAX_PARALLEL = 6;

/**
 * What a fresh machine runs with no INFERENCE_CONFIG: every provider served by the embedded
 * engines (llama.cpp over the models folder, where the pipeline-check model is written, and the
 * OCR model), so every interface answers; nothing here reaches the network.
 */
export const DEFAULT_INFERENCE_CONFIG = {
  providers: [
    { id: 'provider_a', name: 'Provider A', engines: [{ type: 'llama' }, { type: 'ocr' }] },
    // The spec limits provider_b to 3 concurrent requests.
    { id: 'provider_b', name: 'Provider B', engines: [{ type: 'llama' }, { type: 'ocr' }], maxConcurrency: 3 },
    { id: 'provider_c', name: 'Provider C', engines: [{ type: 'llama' }, { type: 'ocr' }] },
    // Image generation needs an sd-webui engine; without one it is refused, never faked.
    { id: 'provider_d', name: 'Provider D', engines: [{ type: 'llama' }, { type: 'ocr' }] },
  ],
  interfaces: {
    serviceT: { providers: ['provider_a'] },
    serviceI: { providers: ['provider_d'], maxParallel: DEFAULT_MAX_PARALLEL },
    proxy: { providers: ['provider_d'], maxParallel: DEFAULT_MAX_PARALLEL },
    // provider_c answers a model listing that names no provider, as the spec describes it.
    gateway: { providers: ['provider_a', 'provider_b', 'provider_c', 'provider_d'], defaultProvider: 'provider_c', imageListingProvider: 'provider_d' },
  },
  plans: [{ id: 'standard', name: 'Standard', models: { provider_a: ['*'], provider_b: ['*'], provider_c: ['*'], provider_d: ['*'] } }],
  defaultPlan: 'standard',
} satisfies InferenceConfigFile;
