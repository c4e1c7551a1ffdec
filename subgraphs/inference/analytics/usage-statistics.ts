import { Field, ObjectType } from '../../shared/type-graphql.js';
import { AnalyticsBucket } from './analytics-bucket.js';
import { UsageStatistic } from './usage-statistic.js';

/** Usage statistics over a range, oldest bucket first, then by provider, model and interface. */
@ObjectType('InferenceUsageStatistics')
export class UsageStatistics {
  @Field(() => AnalyticsBucket, { description: 'The bucket width used: the one asked for, or the one the range suggested.' })
  bucket!: AnalyticsBucket;

  @Field(() => [UsageStatistic], { description: 'Buckets without calls are left out.' })
  data!: UsageStatistic[];

  @Field(() => Boolean, { description: 'Whether rows past the first 10,000 were left out (narrow the range or widen the bucket).' })
  truncated!: boolean;
}
