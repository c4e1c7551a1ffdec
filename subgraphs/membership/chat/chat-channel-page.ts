import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { ChatChannel } from './chat-channel.entity.js';

/** One page of chat channels, newest first, with the cursor of the next page. */
@ObjectType()
export class ChatChannelPage extends PageOf(ChatChannel) {}
