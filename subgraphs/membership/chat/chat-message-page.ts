import { ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { ChatMessage } from './chat-message.entity.js';

/** One page of chat messages, newest first, with the cursor of the next (older) page. */
@ObjectType()
export class ChatMessagePage extends PageOf(ChatMessage) {}
