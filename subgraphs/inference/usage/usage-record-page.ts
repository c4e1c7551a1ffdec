import { Field, Int, ObjectType } from '../../shared/type-graphql.js';
import { UsageRecord } from './usage-record.entity.js';

/** One page of usage records, newest first (ties by id, descending); no total, which would count a whole window per page. */
@ObjectType('InferenceUsagePage')
export class UsageRecordPage {
  @Field(() => [UsageRecord])
  data!: UsageRecord[];

  @Field(() => Int)
  limit!: number;

  @Field(() => Boolean, { description: 'Whether another page follows.' })
  hasMore!: boolean;

  @Field(() => String, { nullable: true, description: 'Pass as after for the next page; null on the last.' })
  nextCursor!: string | null;
}
