import type { UpstreamFlavour } from '../engines/openai-upstream/upstream-flavour.js';
import type { PrivateImageUrls } from '../image-input/image-fetcher.js';
import type { QualityTier, RecommendationCategory } from '../recommendation/recommendation-category.js';
import type { Capability } from './inference-config.schema.js';
import { matchesAnyModelPattern } from './model-glob.js';

export type LlamaEngineConfig = { type: 'llama'; modelsDir: string; sequences?: number; contextSize?: number; threads?: number };

export type OpenAiUpstreamEngineConfig = {
  type: 'openai-upstream';
  url: string;
  /** Read from the file or from the variable apiKeyEnv names. */
  apiKey?: string;
  flavour: UpstreamFlavour;
  /** listingMs and totalMs default to the top-level listing and generation timeouts. */
  timeouts: { connectMs?: number; firstByteMs?: number; totalMs: number; listingMs: number };
  connections?: number;
  /** Whether its models call tools (the upstream's own setting); defaults by flavour. */
  tools?: boolean;
} & ImageUrlConfig;

/** How the platform fetches the image URLs of chats for an engine (the upstream never fetches them). */
export type ImageUrlConfig = { maxImageBytes: number; imageFetchTimeoutMs: number; allowPrivateImageUrls: PrivateImageUrls };

export type OcrEngineConfig = { type: 'ocr'; workers: number } & ImageUrlConfig;

export type SdWebuiEngineConfig = { type: 'sd-webui'; url: string; timeouts: { generationMs: number; listingMs: number } };

export type EngineConfig = LlamaEngineConfig | OpenAiUpstreamEngineConfig | OcrEngineConfig | SdWebuiEngineConfig;

export interface ProviderConfig {
  id: string;
  name: string;
  engines: EngineConfig[];
  /** Requests served at once; more wait or are refused (the interface decides). Unlimited when absent. */
  maxConcurrency?: number;
  /** The allow-list of model ids or globs; every model the engines list when absent. */
  models?: string[];
  /** Client-facing name to the engine's model id. */
  aliases: Record<string, string>;
  capabilities: Capability[];
  /** The configured quality tier, for every category (`default`) or per category; absent: standard. */
  quality?: Partial<Record<'default' | RecommendationCategory, QualityTier>>;
}

export interface PlanConfig {
  id: string;
  name: string;
  /** Provider id to the model ids or globs the plan includes there. */
  models: Record<string, string[]>;
}

export interface InferenceConfig {
  /** The file read, or null for the built-in defaults. */
  source: string | null;
  /** The embedded llama engine's default models folder. */
  modelsDir: string;
  timeouts: { generationMs: number; listingMs: number; imageGenerationMs: number };
  providers: ProviderConfig[];
  interfaces: {
    serviceT: { providers: string[] };
    serviceI: { providers: string[]; maxParallel: number };
    proxy: { providers: string[]; maxParallel: number };
    gateway: { providers: string[]; defaultProvider: string; imageListingProvider: string | null };
  };
  plans: PlanConfig[];
  /** The plan a new key is issued on unless another is named. */
  defaultPlan: string;
  /** Usage records are kept this many whole months before the current one (0: all); usage/usage-retention.ts. */
  usage: { retentionMonths: number };
  /** Responses API answers are kept this many days (OpenAI's 30 by default); responses/response-retention.ts. */
  responses: { retentionDays: number; maxInputBytes: number };
}

/** Whether `plan` includes the model (by its client-facing id) on the provider. */
export function planIncludes(plan: PlanConfig, providerId: string, modelId: string): boolean {
  const patterns = plan.models[providerId];
  return patterns !== undefined && matchesAnyModelPattern(patterns, modelId);
}

/** Whether the provider's allow-list lets the model through (every model when it has none). */
export function providerAllows(provider: ProviderConfig, modelId: string): boolean {
  return provider.models === undefined || matchesAnyModelPattern(provider.models, modelId);
}
