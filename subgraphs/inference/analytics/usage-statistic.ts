import { SafeIntResolver } from 'graphql-scalars';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, Float, ObjectType } from '../../shared/type-graphql.js';
import { UsageInterface } from '../usage/usage-interface.js';

/** Calls, tokens and errors of one provider, model and interface in one time bucket. */
@ObjectType('InferenceUsageStatistic')
export class UsageStatistic {
  @Field(() => DateTimeResolver, { description: 'Start of the bucket (UTC), inclusive.' })
  bucketStart!: Date;

  @Field(() => String)
  provider!: string;

  @Field(() => String)
  model!: string;

  @Field(() => UsageInterface)
  interface!: UsageInterface;

  @Field(() => SafeIntResolver)
  calls!: number;

  @Field(() => SafeIntResolver)
  promptTokens!: number;

  @Field(() => SafeIntResolver)
  completionTokens!: number;

  @Field(() => SafeIntResolver)
  totalTokens!: number;

  @Field(() => SafeIntResolver, { description: 'Images returned by image calls (generation, editing, upscaling).' })
  images!: number;

  @Field(() => SafeIntResolver, { description: 'Calls answered with an HTTP status of 400 or above (client mistakes and refusals included).' })
  errors!: number;

  @Field(() => Float, { description: 'errors / calls, 0 to 1.' })
  errorRate!: number;
}
