import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Field, ObjectType } from '../../shared/type-graphql.js';
import { ChatRevisionAction } from './chat-revision-action.js';

/** One change to a message (the audit trail): the text it had before, who changed it, and when. */
@ObjectType({ description: 'A past version of a message: the text it had before an edit.' })
@Entity({ tableName: 'chat_message_revision' })
@Index({ name: 'chat_message_revision_message_index', properties: ['messageId', 'createdAt'] })
export class ChatMessageRevision {
  [OptionalProps]?: 'id' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  messageId!: string;

  /** The member who made the change (today always the sender). */
  @Property({ type: 'uuid' })
  memberId!: string;

  @Field(() => ChatRevisionAction)
  @Property({ type: 'string', length: 6 })
  action!: ChatRevisionAction;

  @Field(() => String, { description: 'The text before this change.' })
  @Property({ type: 'text' })
  text!: string;

  @Field(() => DateTimeResolver, { description: 'When the change was made.' })
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();
}
