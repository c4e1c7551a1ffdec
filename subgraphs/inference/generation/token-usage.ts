import { Field, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Usage } from '../engine/text-engine.js';

/** Tokens a generation used, as its usage record counts them. */
@ObjectType()
export class TokenUsage {
  @Field(() => Int)
  promptTokens!: number;

  @Field(() => Int)
  completionTokens!: number;

  @Field(() => Int)
  totalTokens!: number;

  static of(usage: Usage): TokenUsage {
    return Object.assign(new TokenUsage(), { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, totalTokens: usage.promptTokens + usage.completionTokens });
  }
}
