import { Field, ObjectType } from '../../../shared/type-graphql.js';
import { Payment } from './payment.entity.js';

/** One page of payments, newest first. */
@ObjectType()
export class PaymentPage {
  @Field(() => [Payment])
  data!: Payment[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
