import { Field, Float, ObjectType } from '../../shared/type-graphql.js';

@ObjectType({ description: 'A category and how confident the classifier is in it, 0 to 1.' })
export class CategoryScore {
  @Field(() => String)
  category!: string;

  @Field(() => Float)
  confidence!: number;
}
