import { Field, ID, ObjectType } from '../../shared/type-graphql.js';

/** What deleting a member category answers. */
@ObjectType()
export class DeletedMemberCategory {
  @Field(() => ID)
  id!: string;

  @Field(() => Boolean)
  deleted!: boolean;
}
