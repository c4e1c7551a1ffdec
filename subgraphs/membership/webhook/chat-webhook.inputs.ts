import { ArrayMaxSize, ArrayMinSize, IsOptional, Length } from 'class-validator';
import { ArgsType, Field, ID } from '../../shared/type-graphql.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-event-type.js';
import { PageArgs } from '../../shared/page.args.js';

@ArgsType()
export class CreateChatWebhookArgs {
  @Field(() => String, { description: 'An http(s) URL on the public internet.' })
  @Length(1, 2048)
  url!: string;

  @Field(() => [String], { description: `One or more of: ${WEBHOOK_EVENT_TYPES.join(', ')}.` })
  @ArrayMinSize(1, { message: 'eventTypes must name at least one event type' })
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  eventTypes!: string[];

  @Field(() => String, { nullable: true })
  @IsOptional()
  @Length(0, 500)
  description?: string | null;
}

@ArgsType()
export class ChatWebhooksArgs extends PageArgs {}

@ArgsType()
export class ChatWebhookDeliveriesArgs extends ChatWebhooksArgs {
  @Field(() => ID)
  webhookId!: string;
}
