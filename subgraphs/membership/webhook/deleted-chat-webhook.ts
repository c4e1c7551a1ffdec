import { Field, ID, ObjectType } from '../../shared/type-graphql.js';

/** What deleting a webhook endpoint answers. */
@ObjectType()
export class DeletedChatWebhook {
  @Field(() => ID)
  id!: string;

  @Field(() => Boolean)
  deleted!: boolean;
}
