import { SafeIntResolver } from 'graphql-scalars';
import { Field, Float, ObjectType } from '../../shared/type-graphql.js';

/**
 * How one model on one provider performed over a range. Latency figures are of the calls that
 * succeeded (status below 400): a refusal answered in a millisecond says nothing of the model's
 * speed. The error rate counts server-side failures (status 500 and above) only, for the same
 * reason: a 422 for a bad temperature is the client's.
 */
@ObjectType('InferenceModelPerformance')
export class ModelPerformance {
  @Field(() => String)
  provider!: string;

  @Field(() => String)
  model!: string;

  @Field(() => SafeIntResolver)
  calls!: number;

  @Field(() => SafeIntResolver, { description: 'Calls answered with a status below 400.' })
  succeeded!: number;

  @Field(() => SafeIntResolver, { description: 'Calls answered with a status of 500 or above.' })
  serverErrors!: number;

  @Field(() => Float, { description: 'serverErrors / calls, 0 to 1.' })
  errorRate!: number;

  @Field(() => Float, { nullable: true, description: 'Median latency (ms) of the successful calls, interpolated; null without one.' })
  latencyP50Ms!: number | null;

  @Field(() => Float, { nullable: true, description: '95th percentile latency (ms) of the successful calls, interpolated.' })
  latencyP95Ms!: number | null;

  @Field(() => Float, { nullable: true, description: 'Median time to first token (ms) of the successful calls that had one.' })
  timeToFirstTokenP50Ms!: number | null;

  @Field(() => Float, {
    nullable: true,
    description: 'Completion tokens per second of the successful calls that produced tokens: their tokens over their whole latency (waiting for the first token included).',
  })
  completionTokensPerSecond!: number | null;
}
