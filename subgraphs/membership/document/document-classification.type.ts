import { Field, Float, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import { DateTimeResolver } from '../../shared/scalars.js';
import { CategoryScore } from './category-score.type.js';
import { DocumentStatus } from './document-status.js';

/**
 * The document's category and the classifier's last answer for it. `category` is the one in force
 * (a user's choice wins over the classifier's, which is still shown in `suggested`).
 */
@ObjectType({ description: 'A document’s category: the one in force, who set it, and the classifier’s answer.' })
export class DocumentClassification {
  @Field(() => ID)
  id!: string;

  @Field(() => DocumentStatus)
  status!: DocumentStatus;

  @Field(() => String, { nullable: true })
  category!: string | null;

  @Field(() => String, { nullable: true, description: 'user, rule, classifier or zero-shot.' })
  source!: string | null;

  @Field(() => String, { nullable: true, description: 'The classifier’s own choice (null when no layer decided).' })
  suggested!: string | null;

  @Field(() => Float, { nullable: true })
  confidence!: number | null;

  @Field(() => String, { nullable: true, description: 'The layer that decided: rule, classifier, zero-shot or none.' })
  layer!: string | null;

  @Field(() => [CategoryScore])
  runnersUp!: CategoryScore[];

  @Field(() => Int, { nullable: true, description: 'The version of the account’s categories and rules it was computed with.' })
  categoriesVersion!: number | null;

  @Field(() => DateTimeResolver, { nullable: true })
  computedAt!: Date | null;
}
