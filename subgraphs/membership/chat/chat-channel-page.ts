import { Field, ObjectType } from '../../shared/type-graphql.js';
import { ChatChannel } from './chat-channel.entity.js';

/** One page of chat channels, newest first, with the cursor of the next page. */
@ObjectType()
export class ChatChannelPage {
  @Field(() => [ChatChannel])
  data!: ChatChannel[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
