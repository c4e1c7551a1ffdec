// The recommendation categories and quality tiers, in a module that imports nothing, so the
// configuration schema can name them without depending on the recommender.

/** The tasks GET /v1/recommendations answers for, in the order it lists them. */
export const RECOMMENDATION_CATEGORIES = ['chat', 'coding', 'vision', 'ocr', 'image', 'upscale', 'fast-text'] as const;
export type RecommendationCategory = (typeof RECOMMENDATION_CATEGORIES)[number];

/** A provider's configured quality, per category or for all of them; absent counts as standard. */
export const QUALITY_TIERS = ['high', 'standard', 'basic'] as const;
export type QualityTier = (typeof QUALITY_TIERS)[number];

export function isRecommendationCategory(value: string): value is RecommendationCategory {
  return (RECOMMENDATION_CATEGORIES as readonly string[]).includes(value);
}
