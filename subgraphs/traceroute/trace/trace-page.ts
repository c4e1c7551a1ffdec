import { Field, Int, ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { Trace } from './trace.entity.js';

/**
 * One page of traces, newest measurement first (ties by traceId, descending). The envelope is
 * the platform's list shape plus the spec's page and limit; no total (a count of tens of millions
 * of rows per request is what the partitions are there to avoid).
 */
@ObjectType()
export class TracePage extends PageOf(Trace) {
  @Field(() => Int, { description: 'The page number served (1 when paging by cursor).' })
  page!: number;

  @Field(() => Int)
  limit!: number;
}
