import { Field, ObjectType } from '../../shared/type-graphql.js';
import { ChatMessage } from './chat-message.entity.js';

/** One page of chat messages, newest first, with the cursor of the next (older) page. */
@ObjectType()
export class ChatMessagePage {
  @Field(() => [ChatMessage])
  data!: ChatMessage[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
