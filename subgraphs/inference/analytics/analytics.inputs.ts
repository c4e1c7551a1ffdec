import { IsOptional } from 'class-validator';
import { ArgsType, Field } from '../../shared/type-graphql.js';
import { UsageArgs } from '../usage/usage.inputs.js';
import { AnalyticsBucket } from './analytics-bucket.js';

/** inferenceUsage's range, filters and paging (limit and after page the history), and the statistics' bucket. */
@ArgsType()
export class AnalyticsArgs extends UsageArgs {
  @Field(() => AnalyticsBucket, { nullable: true, description: 'The usage statistics bucket; derived from the range when absent.' })
  @IsOptional()
  bucket?: AnalyticsBucket | null;
}
