import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from '../../shared/type-graphql.js';
import type { SubgraphContext } from '../../shared/context.js';
import { Member } from '../member/member.entity.js';
import { memberReference } from '../member/member.reference.js';
import { ChatChannelPage } from './chat-channel-page.js';
import { ChatChannel } from './chat-channel.entity.js';
import { ChatChannelService } from './chat-channel.service.js';
import { ChatChannelsArgs, CreateChatChannelArgs, JoinChatChannelArgs, LeaveChatChannelArgs } from './chat.inputs.js';

const service = (ctx: SubgraphContext) => new ChatChannelService(ctx.em, ctx.principal);

@Resolver(() => ChatChannel)
export class ChatChannelResolver {
  @Query(() => ChatChannelPage, { description: 'Channels the acting member sees (public ones and its private ones), newest first.' })
  chatChannels(@Args(() => ChatChannelsArgs) args: ChatChannelsArgs, @Ctx() ctx: SubgraphContext): Promise<ChatChannelPage> {
    return service(ctx).list(args);
  }

  @Query(() => ChatChannel, { nullable: true })
  chatChannel(
    @Arg('asMember', () => ID) asMember: string,
    @Arg('id', () => ID) id: string,
    @Ctx() ctx: SubgraphContext,
  ): Promise<ChatChannel | null> {
    return service(ctx).find(asMember, id);
  }

  @Mutation(() => ChatChannel, { description: 'Creates a channel; the acting member and memberIds join it.' })
  createChatChannel(@Args(() => CreateChatChannelArgs) args: CreateChatChannelArgs, @Ctx() ctx: SubgraphContext): Promise<ChatChannel> {
    return service(ctx).create(args);
  }

  @Mutation(() => ChatChannel, { description: 'Joins a channel, or adds memberId to a channel the acting member belongs to.' })
  joinChatChannel(@Args(() => JoinChatChannelArgs) args: JoinChatChannelArgs, @Ctx() ctx: SubgraphContext): Promise<ChatChannel> {
    return service(ctx).join(args);
  }

  @Mutation(() => ChatChannel, { description: 'The acting member leaves the channel.' })
  leaveChatChannel(@Args(() => LeaveChatChannelArgs) args: LeaveChatChannelArgs, @Ctx() ctx: SubgraphContext): Promise<ChatChannel> {
    return service(ctx).leave(args);
  }

  @FieldResolver(() => Member, { nullable: true, description: 'The member who created the channel.' })
  createdBy(@Root() channel: ChatChannel, @Ctx() ctx: SubgraphContext): Promise<Member | null> {
    return memberReference.__resolveReference({ id: channel.createdById }, ctx);
  }
}
