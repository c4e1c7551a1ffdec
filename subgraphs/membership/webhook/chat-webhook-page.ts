import { Field, ObjectType } from '../../shared/type-graphql.js';
import { ChatWebhook } from './chat-webhook.entity.js';

/** One page of webhook endpoints, newest first. */
@ObjectType()
export class ChatWebhookPage {
  @Field(() => [ChatWebhook])
  data!: ChatWebhook[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
