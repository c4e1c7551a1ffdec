import { ArrayMaxSize, ArrayMinSize, IsOptional, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, ID, Int } from '../../shared/type-graphql.js';
import { MAX_PAGE_SIZE } from '../../shared/pagination.js';
import { WEBHOOK_EVENT_TYPES } from './webhook-event-type.js';

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
export class ChatWebhooksArgs {
  @Field(() => Int, { nullable: true, description: `Page size, 1 to ${MAX_PAGE_SIZE}; default 20.` })
  @IsOptional()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number | null;

  @Field(() => String, { nullable: true, description: 'The nextCursor of the previous page.' })
  @IsOptional()
  after?: string | null;
}

@ArgsType()
export class ChatWebhookDeliveriesArgs extends ChatWebhooksArgs {
  @Field(() => ID)
  webhookId!: string;
}
