import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { ChatWebhookDelivery } from './chat-webhook-delivery.entity.js';

/** One page of an endpoint's deliveries, newest first. */
@ObjectType()
export class ChatWebhookDeliveryPage extends PageOf(ChatWebhookDelivery) {}
