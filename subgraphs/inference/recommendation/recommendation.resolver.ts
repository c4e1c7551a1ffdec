import { Arg, Ctx, Query, Resolver } from '../../shared/type-graphql.js';
import type { InferenceContext } from '../inference-context.js';
import { CategoryRecommendations } from './category-recommendations.js';
import { checkedCategories, RecommendationService } from './recommendation.service.js';

@Resolver(() => CategoryRecommendations)
export class RecommendationResolver {
  @Query(() => [CategoryRecommendations], {
    description:
      'The best model per task (chat, coding, vision, ocr, image, upscale, fast-text; all when no category is given): the gateway\'s models whose provider declares the capability, ranked by configured quality tier, median latency and server error rate of the last 24 hours.',
  })
  inferenceRecommendations(
    @Arg('category', () => String, { nullable: true }) category: string | null | undefined,
    @Ctx() ctx: InferenceContext,
  ): Promise<CategoryRecommendations[]> {
    return new RecommendationService(ctx.inference, ctx.em).recommend(checkedCategories(category));
  }
}
