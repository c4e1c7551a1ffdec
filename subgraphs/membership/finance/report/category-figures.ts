import { Field, ID, ObjectType } from '../../../shared/type-graphql.js';
import { ReportFigures } from './report-figures.js';

/** One member category (the member's category when the invoice was raised); null: no category. */
@ObjectType()
export class CategoryFigures extends ReportFigures {
  @Field(() => ID, { nullable: true })
  categoryId!: string | null;

  @Field(() => String, { nullable: true })
  categoryName!: string | null;
}
