import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { ChatChannelVisibility } from './chat-channel-visibility.js';

/** A chat channel of an account. Its members are ChatChannelMember rows. */
@ObjectType({ description: 'A chat channel: public (every member sees it) or private (only its members do).' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'chat_channel' })
@Unique({ name: 'chat_channel_scope_name_unique', properties: ['accountId', 'mode', 'name'] })
@Index({ name: 'chat_channel_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
export class ChatChannel {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode' | 'lastMessageAt' | 'description';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String, { description: 'Unique in the account: lower-case letters, digits, - and _.' })
  @Property({ type: 'string', length: 80 })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 500, nullable: true })
  description?: string | null = null;

  @Field(() => ChatChannelVisibility)
  @Property({ type: 'string', length: 7 })
  visibility!: ChatChannelVisibility;

  /** The member who created it (resolved as `createdBy`). */
  @Property({ type: 'uuid' })
  createdById!: string;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  /**
   * Time of the newest message. Sends lock the channel row and keep message times strictly
   * increasing, so listing order, publish order and send order agree.
   */
  @Property({ type: 'datetime', nullable: true })
  lastMessageAt?: Date | null = null;

  @Field(() => Boolean, { description: 'True for live-mode data, false for test-mode (sandbox) data.' })
  get livemode(): boolean {
    return this.mode === 'live';
  }
}
