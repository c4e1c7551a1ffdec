import { Field, ObjectType } from '../../shared/type-graphql.js';
import { ChatWebhook } from './chat-webhook.entity.js';

/** An endpoint just registered: the only time its signing secret is shown. */
@ObjectType({ description: 'A webhook endpoint just registered, with its signing secret (shown this once).' })
export class CreatedChatWebhook {
  @Field(() => ChatWebhook)
  webhook!: ChatWebhook;

  @Field(() => String, { description: 'whsec_…: verify each delivery\'s webhook-signature with it. Shown once.' })
  secret!: string;
}
