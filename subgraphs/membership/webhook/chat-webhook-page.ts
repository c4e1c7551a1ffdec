import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { ChatWebhook } from './chat-webhook.entity.js';

/** One page of webhook endpoints, newest first. */
@ObjectType()
export class ChatWebhookPage extends PageOf(ChatWebhook) {}
