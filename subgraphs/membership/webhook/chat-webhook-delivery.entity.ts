import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { ChatWebhookDeliveryStatus } from './chat-webhook-delivery-status.js';

/**
 * One event for one endpoint: the outbox row, written in the transaction of the change it
 * reports, then claimed and sent (and retried) by the delivery worker. The body is stored as
 * sent, so every retry carries the same bytes and the same signature input.
 */
@ObjectType({ description: 'One event delivered (or being delivered) to one webhook endpoint.' })
@Entity({ tableName: 'chat_webhook_delivery' })
@Index({ name: 'chat_webhook_delivery_due_index', properties: ['status', 'nextAttemptAt'] })
@Index({ name: 'chat_webhook_delivery_webhook_index', properties: ['webhookId', 'createdAt', 'id'] })
export class ChatWebhookDelivery {
  [OptionalProps]?: 'id' | 'createdAt' | 'status' | 'attempts' | 'nextAttemptAt' | 'lastStatusCode' | 'lastError' | 'completedAt';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  webhookId!: string;

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String, { description: 'The webhook-id header: the same on every retry.' })
  @Property({ type: 'string', length: 40 })
  eventId!: string;

  @Field(() => String)
  @Property({ type: 'string', length: 40 })
  eventType!: string;

  @Field(() => String, { description: 'The JSON body sent: {type, timestamp, data}.' })
  @Property({ type: 'text' })
  payload!: string;

  @Field(() => ChatWebhookDeliveryStatus)
  @Property({ type: 'string', length: 9 })
  status: ChatWebhookDeliveryStatus = ChatWebhookDeliveryStatus.PENDING;

  @Field(() => Int)
  @Property({ type: 'integer' })
  attempts: number = 0;

  @Field(() => DateTimeResolver, { nullable: true, description: 'When the next attempt is due, while pending.' })
  @Property({ type: 'datetime' })
  nextAttemptAt: Date = new Date();

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  lastStatusCode?: number | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 500, nullable: true })
  lastError?: string | null = null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  completedAt?: Date | null = null;
}
