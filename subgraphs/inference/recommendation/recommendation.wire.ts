import { DomainError } from '../../../core/errors.js';
import { usageEntityManager } from '../analytics/analytics.wire.js';
import type { InferenceRuntime } from '../inference-context.js';
import { WireError } from '../protocol/wire-error.js';
import { checkedCategories, MEASURED_WINDOW_MS, RecommendationService } from './recommendation.service.js';

/** GET /v1/recommendations?category=: the ranked models per category (all without one), snake_case. */
export async function gatewayRecommendations(runtime: Pick<InferenceRuntime, 'config' | 'registry' | 'orm'>, query: Record<string, unknown>, now = new Date()) {
  for (const name of Object.keys(query)) {
    if (name !== 'category') throw new WireError(400, 'unknown_parameter', `Unrecognized query parameter: ${name}`, name);
  }
  const category = query.category;
  if (category !== undefined && typeof category !== 'string') throw new WireError(422, 'invalid_value', 'category must be given once', 'category');
  let categories;
  try {
    categories = checkedCategories(category);
  } catch (error) {
    if (error instanceof DomainError) throw new WireError(422, 'invalid_value', error.message, 'category');
    throw error;
  }
  const answers = await new RecommendationService(runtime, usageEntityManager(runtime)).recommend(categories, now);
  return {
    object: 'list',
    measured_from: new Date(now.getTime() - MEASURED_WINDOW_MS).toISOString(),
    measured_to: now.toISOString(),
    data: answers.map((a) => ({
      category: a.category,
      description: a.description,
      recommended: a.recommendations[0] ? { provider: a.recommendations[0].provider, model: a.recommendations[0].model } : null,
      note: a.note,
      recommendations: a.recommendations.map((r) => ({
        rank: r.rank,
        provider: r.provider,
        model: r.model,
        score: r.score,
        why: {
          summary: r.why,
          quality_tier: r.qualityTier,
          quality_configured: r.qualityConfigured,
          calls_24h: r.calls,
          measured: r.measured,
          latency_p50_ms: r.latencyP50Ms,
          error_rate: r.errorRate,
          quality_score: r.qualityScore,
          latency_score: r.latencyScore,
          error_score: r.errorScore,
        },
      })),
    })),
  };
}
