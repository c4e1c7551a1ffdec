import { Field, ID, ObjectType } from '../../../shared/type-graphql.js';

/** What deleting a draft answers. */
@ObjectType()
export class DeletedInvoice {
  @Field(() => ID)
  id!: string;

  @Field(() => Boolean)
  deleted!: boolean;
}
