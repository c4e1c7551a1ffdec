import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { CHANNEL_MEMBER_CHAT_ACCESS_TRIGGERS } from '../member/chat-access-triggers.js';

/** A member's membership of a channel; leaving deletes the row. Every change bumps its scope's chat access counter (chat-access-triggers.ts). */
@Entity({ tableName: 'chat_channel_member', triggers: CHANNEL_MEMBER_CHAT_ACCESS_TRIGGERS })
@Unique({ name: 'chat_channel_member_unique', properties: ['channelId', 'memberId'] })
@Index({ name: 'chat_channel_member_member_index', properties: ['memberId'] })
export class ChatChannelMember {
  [OptionalProps]?: 'id' | 'joinedAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  channelId!: string;

  @Property({ type: 'uuid' })
  memberId!: string;

  @Property({ type: 'datetime' })
  joinedAt: Date = new Date();
}
