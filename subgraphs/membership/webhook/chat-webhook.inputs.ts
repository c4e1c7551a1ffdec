import { ArrayMaxSize, ArrayMinSize, IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from '../../shared/type-graphql.js';
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
export class RotateChatWebhookSecretArgs {
  @Field(() => ID)
  id!: string;

  @Field(() => Int, { nullable: true, description: 'Hours the old secret keeps signing deliveries beside the new one (0 to 168; 24 by default), as Stripe rolls secrets.' })
  @IsOptional()
  @Min(0)
  @Max(168)
  expireOldAfterHours?: number | null;
}

@ArgsType()
export class ChatWebhookDeliveriesArgs extends ChatWebhooksArgs {
  @Field(() => ID)
  webhookId!: string;
}
