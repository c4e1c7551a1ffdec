import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';

/**
 * An endpoint that receives the account's chat events. The signing secret is stored (it signs
 * every delivery) but shown only once, when the endpoint is registered.
 */
@ObjectType({ description: 'An endpoint receiving chat events, signed the Standard Webhooks way.' })
@Entity({ tableName: 'chat_webhook' })
@Index({ name: 'chat_webhook_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
export class ChatWebhook {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode' | 'enabled' | 'disabledAt' | 'disabledReason' | 'failingSince' | 'description';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String)
  @Property({ type: 'string', length: 2048 })
  url!: string;

  @Field(() => [String], { description: 'Event types delivered to this endpoint.' })
  @Property({ type: 'text[]' })
  eventTypes!: string[];

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 500, nullable: true })
  description?: string | null = null;

  /** `whsec_` + base64 of 24 random bytes. */
  @Property({ type: 'string', length: 64 })
  secret!: string;

  /** The secret a rotation replaced, still signing deliveries beside the new one until it expires. */
  @Property({ type: 'string', length: 64, nullable: true })
  previousSecret?: string | null = null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Until when deliveries are signed with the secret before the last rotation too.' })
  @Property({ type: 'datetime', nullable: true })
  previousSecretExpiresAt?: Date | null = null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  disabledAt?: Date | null = null;

  @Field(() => String, { nullable: true, description: 'gone: the endpoint answered 410; failing: it failed for days.' })
  @Property({ type: 'string', length: 20, nullable: true })
  disabledReason?: string | null = null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'Start of the current run of failed attempts; null after a success.' })
  @Property({ type: 'datetime', nullable: true })
  failingSince?: Date | null = null;

  @Field(() => Boolean)
  get enabled(): boolean {
    return !this.disabledAt;
  }

  @Field(() => Boolean, { description: 'True for live-mode data, false for test-mode (sandbox) data.' })
  get livemode(): boolean {
    return this.mode === 'live';
  }
}
