import { Field, Int, ObjectType } from '../../shared/type-graphql.js';

/** A prompt's (or chat's, with its template) tokens on the model that would serve it. */
@ObjectType()
export class TokenCount {
  @Field(() => Int)
  count!: number;

  @Field(() => Int, { description: "The model's context length." })
  maxModelLen!: number;

  @Field(() => [Int])
  tokens!: number[];

  @Field(() => String)
  model!: string;

  @Field(() => String, { description: 'The provider whose tokenizer counted.' })
  provider!: string;
}
