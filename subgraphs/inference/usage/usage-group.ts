import { SafeIntResolver } from 'graphql-scalars';
import { Field, Float, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import { UsageInterface } from './usage-interface.js';

/** The figures of one group of usage records; the grouping fields asked for are set, the others null. */
@ObjectType('InferenceUsageGroup')
export class UsageGroup {
  @Field(() => String, { nullable: true })
  provider!: string | null;

  @Field(() => String, { nullable: true })
  model!: string | null;

  @Field(() => UsageInterface, { nullable: true })
  interface!: UsageInterface | null;

  @Field(() => ID, { nullable: true, description: 'Grouped by KEY: the key; null for keyless calls.' })
  keyId!: string | null;

  @Field(() => String, { nullable: true, description: 'Grouped by KEY: the client address of keyless calls.' })
  clientAddress!: string | null;

  @Field(() => Int, { nullable: true, description: 'Grouped by STATUS: the HTTP status.' })
  status!: number | null;

  @Field(() => SafeIntResolver, { description: 'Calls.' })
  requests!: number;

  @Field(() => SafeIntResolver, { description: 'Calls answered with an HTTP status of 400 or above.' })
  failed!: number;

  @Field(() => SafeIntResolver)
  promptTokens!: number;

  @Field(() => SafeIntResolver)
  completionTokens!: number;

  @Field(() => SafeIntResolver)
  totalTokens!: number;

  @Field(() => Float, { nullable: true, description: 'Median latency (ms), interpolated; null without calls.' })
  latencyP50Ms!: number | null;

  @Field(() => Float, { nullable: true, description: '95th percentile latency (ms), interpolated; null without calls.' })
  latencyP95Ms!: number | null;

  @Field(() => Float, { nullable: true, description: 'Median time to first token (ms) of the calls that had one.' })
  timeToFirstTokenP50Ms!: number | null;
}
