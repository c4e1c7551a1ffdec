import { Field, ObjectType } from '../../shared/type-graphql.js';
import { Recommendation } from './recommendation.js';

/** The ranked models for one task category. */
@ObjectType('InferenceCategoryRecommendations')
export class CategoryRecommendations {
  @Field(() => String, { description: 'chat, coding, vision, ocr, image, upscale or fast-text.' })
  category!: string;

  @Field(() => String, { description: 'What the category is for and which models qualify.' })
  description!: string;

  @Field(() => [Recommendation], { description: 'Best first; empty when no model the gateway serves qualifies (see note).' })
  recommendations!: Recommendation[];

  @Field(() => String, { nullable: true, description: 'Why the list is empty, or what it could not measure.' })
  note!: string | null;
}
