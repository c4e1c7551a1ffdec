import { Field, ObjectType } from '../../shared/type-graphql.js';
import { FinishReason } from './finish-reason.js';
import { TokenUsage } from './token-usage.js';

/** A finished generation: a chat's answer or a raw prompt's continuation. */
@ObjectType()
export class Completion {
  @Field(() => String)
  text!: string;

  @Field(() => FinishReason)
  finishReason!: FinishReason;

  @Field(() => TokenUsage)
  usage!: TokenUsage;

  @Field(() => String, { description: 'The model that answered (an alias resolved to the model it names).' })
  model!: string;

  @Field(() => String, { description: 'The provider that answered.' })
  provider!: string;
}
