import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, Int, ObjectType } from '../../shared/type-graphql.js';

/** One HTTP attempt of a delivery: the delivery log. */
@ObjectType({ description: 'One attempt to deliver an event: when, how long, and what came back.' })
@Entity({ tableName: 'chat_webhook_attempt' })
@Index({ name: 'chat_webhook_attempt_delivery_index', properties: ['deliveryId', 'attempt'] })
export class ChatWebhookAttempt {
  [OptionalProps]?: 'id' | 'createdAt' | 'statusCode' | 'error';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  deliveryId!: string;

  @Property({ type: 'uuid' })
  webhookId!: string;

  @Field(() => Int, { description: '1 for the first attempt.' })
  @Property({ type: 'integer' })
  attempt!: number;

  @Field(() => Int, { nullable: true, description: 'HTTP status; null when no response came.' })
  @Property({ type: 'integer', nullable: true })
  statusCode?: number | null = null;

  @Field(() => Int)
  @Property({ type: 'integer' })
  durationMs!: number;

  @Field(() => String, { nullable: true, description: 'Why it failed: a timeout, a refused address, a status.' })
  @Property({ type: 'string', length: 500, nullable: true })
  error?: string | null = null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
