import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { ChatMessageMode } from './chat-message-mode.js';

/**
 * A chat message. `mode` of the GraphQL type is how it is addressed (`kind` here, as `mode` is
 * the account's live/test mode). A deleted message keeps its row with no text; its text is
 * kept in a DELETE revision, the audit trail.
 */
@ObjectType({ description: 'A chat message: direct, in a channel, or a broadcast announcement.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'chat_message' })
@Index({ name: 'chat_message_channel_index', properties: ['channelId', 'createdAt', 'id'] })
@Index({ name: 'chat_message_conversation_index', properties: ['accountId', 'mode', 'conversationKey', 'createdAt', 'id'] })
@Index({ name: 'chat_message_scope_kind_index', properties: ['accountId', 'mode', 'kind', 'createdAt', 'id'] })
export class ChatMessage {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode' | 'channelId' | 'recipientId' | 'conversationKey' | 'editedAt' | 'deletedAt';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => ChatMessageMode, { name: 'mode' })
  @Property({ type: 'string', length: 9 })
  kind!: ChatMessageMode;

  @Property({ type: 'uuid', nullable: true })
  channelId?: string | null = null;

  @Property({ type: 'uuid' })
  senderId!: string;

  @Property({ type: 'uuid', nullable: true })
  recipientId?: string | null = null;

  /** Both members of a direct conversation, in order: one index range whoever sent. */
  @Property({ type: 'string', length: 73, nullable: true })
  conversationKey?: string | null = null;

  @Field(() => String, { nullable: true, description: 'Null once the message is deleted.' })
  @Property({ type: 'text', nullable: true })
  text!: string | null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  editedAt?: Date | null = null;

  @Field(() => DateTimeResolver, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  deletedAt?: Date | null = null;

  @Field(() => Boolean, { description: 'True for live-mode data, false for test-mode (sandbox) data.' })
  get livemode(): boolean {
    return this.mode === 'live';
  }
}

/** The key of the direct conversation between two members, whichever of them sends. */
export function conversationKey(a: string, b: string): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}
