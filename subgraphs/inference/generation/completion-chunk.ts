import { Field, ObjectType } from '../../shared/type-graphql.js';
import { FinishReason } from './finish-reason.js';
import { TokenUsage } from './token-usage.js';

/** A streamed piece of a generation: text as it comes; the last chunk has no text but the finishReason and the usage. */
@ObjectType()
export class CompletionChunk {
  @Field(() => String)
  text!: string;

  @Field(() => FinishReason, { nullable: true, description: 'Set on the last chunk only.' })
  finishReason?: FinishReason | null;

  @Field(() => TokenUsage, { nullable: true, description: 'Set on the last chunk only.' })
  usage?: TokenUsage | null;
}
