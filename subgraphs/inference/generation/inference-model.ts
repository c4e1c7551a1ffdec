import { Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import { ModelStatus } from './model-status.js';

/** A model the gateway's providers serve, once per id whatever the number of providers serving it. */
@ObjectType()
export class InferenceModel {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: "The provider routing prefers for it: the gateway's default provider when it serves the model." })
  provider!: string;

  @Field(() => [String], { description: 'Every provider serving it, the preferred one first.' })
  providers!: string[];

  @Field(() => Int)
  contextLength!: number;

  @Field(() => [String], { description: 'text, and image for vision models.' })
  inputModalities!: string[];

  @Field(() => ModelStatus)
  status!: ModelStatus;

  @Field(() => String, { nullable: true, description: 'The model this id is an alias of.' })
  aliasOf?: string | null;

  @Field(() => Boolean, { description: "Whether the caller's plan includes it on at least one provider serving it." })
  onPlan!: boolean;
}
