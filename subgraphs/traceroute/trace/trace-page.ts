import { Field, ObjectType } from '../../shared/type-graphql.js';
import { Trace } from './trace.entity.js';

/** One page of traces, most recently measured first, with the cursor of the next page. */
@ObjectType()
export class TracePage {
  @Field(() => [Trace])
  data!: Trace[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
