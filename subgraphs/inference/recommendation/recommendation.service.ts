import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../../core/errors.js';
import type { Capability } from '../config/inference-config.schema.js';
import type { ProviderConfig } from '../config/inference-config.js';
import type { InferenceRuntime } from '../inference-context.js';
import type { ImageModel, ProviderModel } from '../provider-registry/provider-registry.js';
import { IMAGE_UPSTREAM_SETTING } from '../engine/image-engine.js';
import { AnalyticsService } from '../analytics/analytics.service.js';
import type { ModelPerformance } from '../analytics/model-performance.js';
import type { CategoryRecommendations } from './category-recommendations.js';
import { isRecommendationCategory, RECOMMENDATION_CATEGORIES, type QualityTier, type RecommendationCategory } from './recommendation-category.js';
import type { Recommendation } from './recommendation.js';

/** How far back the measured figures reach. */
export const MEASURED_WINDOW_MS = 86_400_000;
/** Fewer calls than this in the window and a model's latency and error rate count as neutral: one slow call is no trend. */
export const MIN_MEASURED_CALLS = 5;

const TIER_SCORE: Record<QualityTier, number> = { high: 1, standard: 0, basic: -1 };

interface Weights {
  quality: number;
  latency: number;
  errors: number;
}

/** The usual balance: quality first, then speed; a model failing one call in four loses a whole tier. */
const BALANCED: Weights = { quality: 2, latency: 1, errors: 4 };

interface CategoryRule {
  description: string;
  /** The capability the provider must declare; image categories have no text model to offer. */
  capability: Capability;
  /** What the model must take as input (its engine's listing says). */
  input: 'text' | 'image';
  /** The OCR engine transcribes the text of an image: an answer for ocr, not a conversation or a description. */
  ocrEngine: 'exclude' | 'include';
  weights: Weights;
  /** What is ranked: text models (the default), the image providers' checkpoints, or their upscalers. */
  candidates?: 'checkpoints' | 'upscalers';
}

/** A model (or upscaler) a category may recommend, on the provider serving it. */
interface Candidate {
  provider: string;
  model: string;
}

/**
 * The categories and the rule of each. A candidate is a model the gateway serves whose provider
 * declares the capability and whose engine takes the input; candidates are ranked by
 * score = quality + latency - errors, with the category's weights:
 * - quality: the provider's configured tier for the category (or its `default`): high +1,
 *   standard or none 0, basic -1;
 * - latency: log2(median p50 of the measured candidates / this p50), clamped to -1..1 (twice as
 *   fast as the median +1, twice as slow -1), 0 without enough calls;
 * - errors: the server-side error rate (status 500 and above), 0 without enough calls.
 */
export const CATEGORY_RULES: Record<RecommendationCategory, CategoryRule> = {
  chat: { description: 'Conversation and general text: models with the chat capability that take text.', capability: 'chat', input: 'text', ocrEngine: 'exclude', weights: BALANCED },
  coding: {
    description: "Writing and reviewing code: chat models ranked by the providers' coding tier.",
    capability: 'chat',
    input: 'text',
    ocrEngine: 'exclude',
    weights: BALANCED,
  },
  vision: {
    description: 'Understanding images in a chat (base64 images on the gateway): models of providers with the vision capability that take images; the OCR engine, which only transcribes, is left out.',
    capability: 'vision',
    input: 'image',
    ocrEngine: 'exclude',
    weights: BALANCED,
  },
  ocr: {
    description: 'Reading the text in an image: every model of a provider with the vision capability that takes images, the OCR engine included.',
    capability: 'vision',
    input: 'image',
    ocrEngine: 'include',
    weights: BALANCED,
  },
  image: {
    description: "Image generation (txt2img, images/generations): the checkpoints of providers with an image upstream that declare txt2img, as /v1/models lists them.",
    capability: 'txt2img',
    input: 'text',
    ocrEngine: 'exclude',
    weights: BALANCED,
    candidates: 'checkpoints',
  },
  upscale: {
    description: 'Image upscaling (images/upscale): the upscalers of providers with an image upstream that declare upscale, the embedded Lanczos and Nearest included (None, which keeps the size, is not one).',
    capability: 'upscale',
    input: 'image',
    ocrEngine: 'exclude',
    weights: BALANCED,
    candidates: 'upscalers',
  },
  'fast-text': {
    description: 'The quickest text answers: chat models ranked mostly by measured latency.',
    capability: 'chat',
    input: 'text',
    ocrEngine: 'exclude',
    weights: { quality: 0.5, latency: 2, errors: 4 },
  },
};

const round = (value: number, places = 3) => Math.round(value * 10 ** places) / 10 ** places;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

function tierOf(provider: ProviderConfig, category: RecommendationCategory): { tier: QualityTier; configured: boolean } {
  const tier = provider.quality?.[category] ?? provider.quality?.default;
  return tier ? { tier, configured: true } : { tier: 'standard', configured: false };
}

/** The categories asked for: one, or all when none is named; BAD_USER_INPUT naming `category` for an unknown one. */
export function checkedCategories(category: string | null | undefined): RecommendationCategory[] {
  if (category == null) return [...RECOMMENDATION_CATEGORIES];
  if (!isRecommendationCategory(category)) {
    throw new DomainError('BAD_USER_INPUT', `Unknown category "${category}"; one of ${RECOMMENDATION_CATEGORIES.join(', ')}`, { param: 'category', reason: 'invalid_parameter' });
  }
  return [category];
}

/**
 * The best model per task, from what the gateway serves (its providers' declared capabilities
 * and configured quality tiers) and how each model did in the last 24 hours of usage records.
 */
export class RecommendationService {
  constructor(
    private readonly runtime: Pick<InferenceRuntime, 'config' | 'registry'>,
    private readonly em: EntityManager,
  ) {}

  async recommend(categories: readonly RecommendationCategory[], now = new Date()): Promise<CategoryRecommendations[]> {
    const imagesAsked = categories.some((category) => CATEGORY_RULES[category].candidates !== undefined);
    const [models, checkpoints, upscalers, measured] = await Promise.all([
      this.runtime.registry.listModels({ interface: 'gateway' }),
      imagesAsked ? this.runtime.registry.listImageModels({ interface: 'gateway' }) : [],
      imagesAsked ? this.upscalers() : [],
      // One statement for every category: all calls, every interface, the whole window.
      new AnalyticsService(this.em).performance({ kind: 'all' }, { from: new Date(now.getTime() - MEASURED_WINDOW_MS), to: now }),
    ]);
    const figures = new Map(measured.map((p) => [`${p.provider}\u0000${p.model}`, p]));
    return categories.map((category) => this.rank(category, this.candidates(category, models, checkpoints, upscalers), figures));
  }

  /** The upscalers of the gateway's image providers (an upstream that cannot list offers none now). */
  private async upscalers(): Promise<Candidate[]> {
    const targets = this.runtime.registry.imageTargets({ interface: 'gateway', capability: 'upscale' });
    const lists = await Promise.all(
      targets.map(async ({ provider, engine }) => (await engine.upscalers().catch(() => [])).filter((u) => u.name !== 'None').map((u) => ({ provider: provider.id, model: u.name }))),
    );
    return lists.flat();
  }

  private candidates(category: RecommendationCategory, models: ProviderModel[], checkpoints: ImageModel[], upscalers: Candidate[]): Candidate[] {
    const rule = CATEGORY_RULES[category];
    const declares = (providerId: string) => this.runtime.config.providers.find((p) => p.id === providerId)?.capabilities.includes(rule.capability) === true;
    if (rule.candidates === 'checkpoints') return checkpoints.filter((m) => m.status === 'ready' && declares(m.provider)).map((m) => ({ provider: m.provider, model: m.id }));
    if (rule.candidates === 'upscalers') return upscalers.filter((u) => declares(u.provider));
    return models
      .filter(
        (m) =>
          declares(m.provider) &&
          m.model.inputModalities.includes(rule.input) &&
          m.model.status !== 'failed' &&
          m.model.status !== 'unavailable' &&
          (rule.ocrEngine === 'include' || m.engine.kind !== 'ocr'),
      )
      .map((m) => ({ provider: m.provider, model: m.id }));
  }

  private rank(category: RecommendationCategory, candidates: Candidate[], figures: Map<string, ModelPerformance>): CategoryRecommendations {
    const rule = CATEGORY_RULES[category];
    const base = { category, description: rule.description };
    if (!candidates.length) {
      const what = rule.candidates === 'checkpoints' ? 'an image model' : rule.candidates === 'upscalers' ? 'an upscaler' : `a model that takes ${rule.input} input`;
      const embedded = rule.candidates === 'upscalers' ? ' Lanczos and Nearest still run embedded when no provider is named.' : '';
      return {
        ...base,
        recommendations: [],
        note: `No model the gateway serves qualifies: none of its providers declares ${rule.capability} with ${what}${rule.candidates ? ` (that needs ${IMAGE_UPSTREAM_SETTING})` : ''}.${embedded}`,
      };
    }
    const measuredOf = (m: Candidate) => {
      const p = figures.get(`${m.provider}\u0000${m.model}`);
      return p && p.calls >= MIN_MEASURED_CALLS ? p : undefined;
    };
    const latencies = candidates.map((m) => measuredOf(m)?.latencyP50Ms).filter((v): v is number => typeof v === 'number' && v > 0);
    const reference = latencies.length ? median(latencies) : null;
    const ranked = candidates.map((m): Omit<Recommendation, 'rank'> => {
      const provider = this.runtime.config.providers.find((p) => p.id === m.provider)!;
      const { tier, configured } = tierOf(provider, category);
      const p = figures.get(`${m.provider}\u0000${m.model}`);
      const enough = p !== undefined && p.calls >= MIN_MEASURED_CALLS;
      const p50 = enough ? p.latencyP50Ms : null;
      const qualityScore = rule.weights.quality * TIER_SCORE[tier];
      const latencyScore = p50 && reference ? rule.weights.latency * Math.max(-1, Math.min(1, Math.log2(reference / p50))) : 0;
      const errorScore = enough ? rule.weights.errors * p.errorRate : 0;
      const why = [
        `quality tier ${tier}${configured ? ` (configured${provider.quality?.[category] ? ` for ${category}` : ''})` : ' (none configured)'}: ${signed(qualityScore)}`,
        enough
          ? p50 !== null && reference !== null
            ? `p50 latency ${round(p50, 1)} ms against the candidates' median ${round(reference, 1)} ms over ${p.succeeded} successful calls in 24 h: ${signed(latencyScore)}`
            : `no successful call in 24 h to time: latency neutral`
          : `${p?.calls ?? 0} calls in the last 24 h (fewer than ${MIN_MEASURED_CALLS}): latency and error rate count as neutral`,
        ...(enough ? [`server error rate ${round(p.errorRate * 100, 1)}% (${p.serverErrors} of ${p.calls} calls): ${signed(-errorScore)}`] : []),
      ].join('; ');
      return {
        provider: m.provider,
        model: m.model,
        score: round(qualityScore + latencyScore - errorScore),
        qualityTier: tier,
        qualityConfigured: configured,
        calls: p?.calls ?? 0,
        measured: enough,
        latencyP50Ms: p50,
        errorRate: enough ? p.errorRate : null,
        qualityScore: round(qualityScore),
        latencyScore: round(latencyScore),
        errorScore: round(errorScore),
        why,
      };
    });
    ranked.sort((a, b) => b.score - a.score || a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model));
    const unmeasured = ranked.filter((r) => !r.measured).length;
    return {
      ...base,
      recommendations: ranked.map((r, i) => ({ rank: i + 1, ...r })),
      note: unmeasured ? `${unmeasured} of ${ranked.length} candidates had fewer than ${MIN_MEASURED_CALLS} calls in the last 24 h; for them only the quality tier counts.` : null,
    };
  }
}

const signed = (value: number) => (value >= 0 ? `+${round(value)}` : `${round(value)}`);
