import { Field, ObjectType } from '../../../shared/type-graphql.js';
import { Invoice } from './invoice.entity.js';

/** One page of invoices, newest first. */
@ObjectType()
export class InvoicePage {
  @Field(() => [Invoice])
  data!: Invoice[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
