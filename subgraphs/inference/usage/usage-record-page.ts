import { Field, Int, ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { UsageRecord } from './usage-record.entity.js';

/** One page of usage records, newest first (ties by id, descending); no total, which would count a whole window per page. */
@ObjectType('InferenceUsagePage')
export class UsageRecordPage extends PageOf(UsageRecord) {
  @Field(() => Int)
  limit!: number;
}
