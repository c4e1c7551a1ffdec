import { Field, ObjectType } from '../../shared/type-graphql.js';
import { ChatWebhookDelivery } from './chat-webhook-delivery.entity.js';

/** One page of an endpoint's deliveries, newest first. */
@ObjectType()
export class ChatWebhookDeliveryPage {
  @Field(() => [ChatWebhookDelivery])
  data!: ChatWebhookDelivery[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
