import { Field, Float, Int, ObjectType } from '../../shared/type-graphql.js';

/** One model for a task, with the figures its rank was computed from. */
@ObjectType('InferenceRecommendation')
export class Recommendation {
  @Field(() => Int, { description: '1 for the recommended model, then the alternatives in order.' })
  rank!: number;

  @Field(() => String)
  provider!: string;

  @Field(() => String)
  model!: string;

  @Field(() => Float, { description: 'quality + latency - errors, the sum the rank sorts by (rounded to 3 decimals).' })
  score!: number;

  @Field(() => String, { description: 'high, standard or basic: the provider\'s configured tier for the category (standard when none is configured).' })
  qualityTier!: string;

  @Field(() => Boolean, { description: 'Whether the tier comes from the configuration (false: none configured, counted as standard).' })
  qualityConfigured!: boolean;

  @Field(() => Int, { description: 'Calls of this model on this provider in the last 24 hours, on every interface.' })
  calls!: number;

  @Field(() => Boolean, { description: `Whether there were enough calls (at least 5) for latency and error rate to count; otherwise both are neutral.` })
  measured!: boolean;

  @Field(() => Float, { nullable: true, description: 'Median latency (ms) of the successful calls of the last 24 hours.' })
  latencyP50Ms!: number | null;

  @Field(() => Float, { nullable: true, description: 'Share of the last 24 hours\' calls that failed on the server side (status 500 or above).' })
  errorRate!: number | null;

  @Field(() => Float, { description: 'The quality part of the score.' })
  qualityScore!: number;

  @Field(() => Float, { description: 'The latency part of the score: faster than the median of the measured candidates adds, slower subtracts.' })
  latencyScore!: number;

  @Field(() => Float, { description: 'The error part of the score, subtracted.' })
  errorScore!: number;

  @Field(() => String, { description: 'Why, in words: the figures above and what each contributed.' })
  why!: string;
}
