import { z } from 'zod';
import { UPSTREAM_FLAVOURS } from '../engines/openai-upstream/upstream-flavour.js';
import { isAddressOrNetwork } from '../image-input/image-fetcher.js';
import { QUALITY_TIERS, RECOMMENDATION_CATEGORIES } from '../recommendation/recommendation-category.js';
import { MAX_USAGE_WINDOW_DAYS, MIN_USAGE_RETENTION_MONTHS } from '../usage/usage-limits.js';

/** The spec's gateway providers; provider_d_image is a model-listing filter, never a provider. */
export const SPEC_PROVIDER_IDS = ['provider_a', 'provider_b', 'provider_c', 'provider_d'] as const;
export const IMAGE_LISTING_FILTER = 'provider_d_image';

export const CAPABILITIES = ['chat', 'completion', 'tokenize', 'vision', 'txt2img', 'img2img', 'upscale'] as const;
export type Capability = (typeof CAPABILITIES)[number];

const ENGINE_TYPES = ['llama', 'openai-upstream', 'ocr', 'sd-webui'] as const;

const count = z.int().min(1);
const milliseconds = z.int().min(1).max(86_400_000);
const httpUrl = z.url({ protocol: /^https?$/ });
const id = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be 1-64 lower-case letters, digits or underscores, starting with a letter');
// Model ids or globs: `*` stands for any run of characters (slashes too), `?` for one.
const modelPattern = z.string().min(1).max(200).regex(/^\S+$/, 'must not contain spaces');

// Image URLs of chats are fetched by the platform: their limits, and which private addresses they may reach.
const imageUrlOptions = {
  maxImageBytes: count.optional(),
  imageFetchTimeoutMs: milliseconds.optional(),
  /** true: every private address (development and tests); a list: those addresses and CIDR networks only. */
  allowPrivateImageUrls: z
    .union([z.boolean(), z.array(z.string().refine(isAddressOrNetwork, 'must be an IP address or a CIDR network, e.g. 10.1.0.0/16')).min(1)])
    .optional(),
};

const llamaEngine = z.strictObject({
  type: z.literal('llama'),
  /** Defaults to the top-level modelsDir; relative paths are read from the config file's folder. */
  modelsDir: z.string().min(1).optional(),
  sequences: count.optional(),
  contextSize: count.optional(),
  threads: count.optional(),
});

const upstreamEngine = z
  .strictObject({
    type: z.literal('openai-upstream'),
    url: httpUrl,
    apiKey: z.string().min(1).optional(),
    /** The environment variable holding the key, so that the file need not hold a secret. */
    apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name').optional(),
    flavour: z.enum(UPSTREAM_FLAVOURS).optional(),
    timeouts: z
      .strictObject({ connectMs: milliseconds.optional(), firstByteMs: milliseconds.optional(), totalMs: milliseconds.optional(), listingMs: milliseconds.optional() })
      .optional(),
    connections: count.optional(),
    /** Whether the upstream's models call tools (vLLM started with --enable-auto-tool-choice); OpenAI itself always does. */
    tools: z.boolean().optional(),
    ...imageUrlOptions,
  })
  .refine((e) => !(e.apiKey && e.apiKeyEnv), { message: 'give apiKey or apiKeyEnv, not both', path: ['apiKeyEnv'] });

const ocrEngine = z.strictObject({
  type: z.literal('ocr'),
  ...imageUrlOptions,
  workers: count.optional(),
});

const sdWebuiEngine = z.strictObject({
  type: z.literal('sd-webui'),
  url: httpUrl,
  timeouts: z.strictObject({ generationMs: milliseconds.optional(), listingMs: milliseconds.optional() }).optional(),
});

const engine = z.discriminatedUnion('type', [llamaEngine, upstreamEngine, ocrEngine, sdWebuiEngine], {
  error: (issue) =>
    issue.code === 'invalid_union'
      ? `unknown engine type ${JSON.stringify((issue.input as { type?: unknown } | undefined)?.type)} (one of ${ENGINE_TYPES.join(', ')})`
      : undefined,
});

const provider = z.strictObject({
  id,
  name: z.string().min(1).max(200),
  /** Text engines answer in order (the first that lists a model serves it); sd-webui serves images. */
  engines: z.array(engine).min(1),
  maxConcurrency: count.optional(),
  /** Only models matching one of these are listed and served; all when absent. */
  models: z.array(modelPattern).min(1).optional(),
  /** Names a client may use for an engine's model id. */
  aliases: z.record(modelPattern, modelPattern).optional(),
  /** What the provider does; derived from its engines when absent. */
  capabilities: z.array(z.enum(CAPABILITIES)).min(1).optional(),
  /** The quality tier GET /v1/recommendations weighs: `default` for every category, or one per category; standard when absent. */
  quality: z.partialRecord(z.enum(['default', ...RECOMMENDATION_CATEGORIES]), z.enum(QUALITY_TIERS)).optional(),
});

const interfaceProviders = z.array(id).min(1);

const plan = z.strictObject({
  id,
  name: z.string().min(1).max(200).optional(),
  /** Per provider, the model ids or globs the plan includes. */
  models: z.record(z.string(), z.array(modelPattern).min(1)),
});

/** The file's shape; every top-level key is optional and an absent one takes its default. */
export const inferenceConfigFile = z.strictObject({
  $schema: z.string().optional(),
  modelsDir: z.string().min(1).optional(),
  timeouts: z.strictObject({ generationMs: milliseconds.optional(), listingMs: milliseconds.optional(), imageGenerationMs: milliseconds.optional() }).optional(),
  providers: z.array(provider).min(1).optional(),
  interfaces: z
    .strictObject({
      serviceT: z.strictObject({ providers: interfaceProviders }).optional(),
      serviceI: z.strictObject({ providers: interfaceProviders, maxParallel: count.optional() }).optional(),
      proxy: z.strictObject({ providers: interfaceProviders, maxParallel: count.optional() }).optional(),
      gateway: z.strictObject({ providers: interfaceProviders, defaultProvider: id.optional(), imageListingProvider: id.optional() }).optional(),
    })
    .optional(),
  plans: z.array(plan).min(1).optional(),
  defaultPlan: id.optional(),
  usage: z
    .strictObject({
      retentionMonths: z
        .int()
        .refine((months) => months === 0 || (months >= MIN_USAGE_RETENTION_MONTHS && months <= 1200), {
          message: `0 (keep every record), or ${MIN_USAGE_RETENTION_MONTHS} to 1200: the usage API reads windows of up to ${MAX_USAGE_WINDOW_DAYS} days`,
        })
        .optional(),
    })
    .optional(),
  // Responses API answers kept for GET, previous_response_id and item_reference (responses/response-store.ts).
  responses: z.strictObject({ retentionDays: z.int().min(1).max(3650).optional(), maxInputBytes: z.int().min(0).max(26_214_400).optional() }).optional(),
});

export type InferenceConfigFile = z.infer<typeof inferenceConfigFile>;
export type EngineConfigInput = z.infer<typeof engine>;
export type ProviderConfigInput = z.infer<typeof provider>;
