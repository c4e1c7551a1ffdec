import { Field, ObjectType } from '../../../shared/type-graphql.js';
import { Refund } from './refund.entity.js';

/** One page of refunds, newest first. */
@ObjectType()
export class RefundPage {
  @Field(() => [Refund])
  data!: Refund[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
