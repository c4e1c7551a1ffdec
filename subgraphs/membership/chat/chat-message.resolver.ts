import DataLoader from 'dataloader';
import { Arg, Args, Ctx, Extensions, FieldResolver, ID, Mutation, Query, Resolver, Root, Subscription } from '../../shared/type-graphql.js';
import { EVENT_IS_ROOT } from '../../shared/shared-event-results.js';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { Member } from '../member/member.entity.js';
import { memberReference } from '../member/member.reference.js';
import { ChatChannel } from './chat-channel.entity.js';
import { ChatMessagePage } from './chat-message-page.js';
import { ChatMessageRevision } from './chat-message-revision.entity.js';
import { ChatMessage } from './chat-message.entity.js';
import { ChatMessageService } from './chat-message.service.js';
import { chatChannelReference } from './chat.reference.js';
import { ChatMessagesArgs, DeleteChatMessageArgs, EditChatMessageArgs, SendChatMessageArgs } from './chat.inputs.js';
import { messageAddedStream, type MessageAddedArgs } from './message-added.js';

const service = (ctx: SubgraphContext) => new ChatMessageService(ctx.em, ctx.principal, ctx.pubsub);

/** Every revision of a page of messages in one statement, oldest first. */
function revisionLoader(ctx: SubgraphContext) {
  return loaderFor(ctx, 'chatMessage.revisions', () =>
    new DataLoader<string, ChatMessageRevision[]>(async (ids) => {
      const rows = await ctx.em.find(ChatMessageRevision, { messageId: { $in: [...ids] } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
      return ids.map((id) => rows.filter((row) => row.messageId === id));
    }),
  );
}

@Resolver(() => ChatMessage)
export class ChatMessageResolver {
  @Query(() => ChatMessagePage, {
    description: "A channel's messages, a direct conversation's (withMember), or the broadcasts: newest first.",
  })
  chatMessages(@Args(() => ChatMessagesArgs) args: ChatMessagesArgs, @Ctx() ctx: SubgraphContext): Promise<ChatMessagePage> {
    return service(ctx).list(args);
  }

  @Query(() => ChatMessage, { nullable: true })
  chatMessage(
    @Arg('asMember', () => ID) asMember: string,
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ChatMessage | null> {
    return service(ctx).find(asMember, id);
  }

  @Mutation(() => ChatMessage, { description: 'Sends a DIRECT (to), CHANNEL (channelId) or BROADCAST message.' })
  sendChatMessage(@Args(() => SendChatMessageArgs) args: SendChatMessageArgs, @Ctx() ctx: SubgraphContext): Promise<ChatMessage> {
    return service(ctx).send(args);
  }

  @Mutation(() => ChatMessage, { description: 'Replaces the text of a message the acting member sent.' })
  editChatMessage(@Args(() => EditChatMessageArgs) args: EditChatMessageArgs, @Ctx() ctx: SubgraphContext): Promise<ChatMessage> {
    return service(ctx).edit(args);
  }

  @Mutation(() => ChatMessage, { description: 'Deletes a message the acting member sent.' })
  deleteChatMessage(@Args(() => DeleteChatMessageArgs) args: DeleteChatMessageArgs, @Ctx() ctx: SubgraphContext): Promise<ChatMessage> {
    return service(ctx).delete(args);
  }

  @Subscription(() => ChatMessage, {
    description:
      'Messages sent after the subscription starts that the acting member may see: in one channel (channelId), ' +
      'in one direct conversation (withMember), or all of its messages (direct, its channels, broadcasts).',
    subscribe: ({ args, context }) => messageAddedStream(args as MessageAddedArgs, context as SubgraphContext),
  })
  // The message as it came: the arguments only chose the events (messageAddedStream's checks), so
  // subscribers of one principal and document share each message's execution.
  @Extensions({ [EVENT_IS_ROOT]: true })
  messageAdded(
    @Root() message: ChatMessage,
    @Arg('asMember', () => ID) _asMember: string,
    @Arg('channelId', () => ID, { nullable: true }) _channelId: string | null,
    @Arg('withMember', () => ID, { nullable: true }) _withMember: string | null,
  ): ChatMessage {
    return message;
  }

  @FieldResolver(() => Member)
  async sender(@Root() message: ChatMessage, @Ctx() ctx: SubgraphContext): Promise<Member> {
    return (await memberReference.__resolveReference({ id: message.senderId }, ctx))!;
  }

  @FieldResolver(() => Member, { nullable: true, description: 'The recipient of a DIRECT message.' })
  recipient(@Root() message: ChatMessage, @Ctx() ctx: SubgraphContext): Promise<Member | null> | null {
    return message.recipientId ? memberReference.__resolveReference({ id: message.recipientId }, ctx) : null;
  }

  @FieldResolver(() => ChatChannel, { nullable: true, description: 'The channel of a CHANNEL message.' })
  channel(@Root() message: ChatMessage, @Ctx() ctx: SubgraphContext): Promise<ChatChannel | null> | null {
    return message.channelId ? chatChannelReference.__resolveReference({ id: message.channelId }, ctx) : null;
  }

  @FieldResolver(() => [ChatMessageRevision], {
    description: 'Earlier texts of an edited message, oldest first. A deleted message shows none: its trail is kept, not shown.',
  })
  async revisions(@Root() message: ChatMessage, @Ctx() ctx: SubgraphContext): Promise<ChatMessageRevision[]> {
    if (message.deletedAt) return [];
    return revisionLoader(ctx).load(message.id);
  }
}
