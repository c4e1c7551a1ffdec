import { Field, ID, ObjectType } from '../../shared/type-graphql.js';

/** What a delete answers: the member is archived, not erased (its finance records stay). */
@ObjectType()
export class DeletedMember {
  @Field(() => ID)
  id!: string;

  @Field(() => Boolean)
  deleted!: boolean;
}
