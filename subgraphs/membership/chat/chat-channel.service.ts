import { UniqueConstraintViolationException, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { paginate, type Page } from '../../shared/pagination.js';
import { ChatAccess } from './chat-access.js';
import { ChatChannelMember } from './chat-channel-member.entity.js';
import { ChatChannelVisibility } from './chat-channel-visibility.js';
import { ChatChannel } from './chat-channel.entity.js';
import { ChannelNameTakenError, NotChannelMemberError } from './chat.errors.js';
import { enqueueWebhookEvent } from '../webhook/webhook-outbox.js';
import { channelWebhookData } from './chat-webhook-data.js';
import type { ChatChannelsArgs, CreateChatChannelArgs, JoinChatChannelArgs, LeaveChatChannelArgs } from './chat.inputs.js';

/** Chat channels of the principal's account and mode, seen by the acting member. */
export class ChatChannelService {
  private readonly access: ChatAccess;

  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {
    this.access = new ChatAccess(em, principal);
  }

  /** Public channels and the private channels the acting member belongs to, newest first. */
  async list(args: ChatChannelsArgs): Promise<Page<ChatChannel>> {
    const member = await this.access.activeMember(args.asMember);
    const mine = await this.access.channelIdsOf(member.id);
    const where: FilterQuery<ChatChannel>[] = [
      this.access.scope,
      { $or: [{ visibility: ChatChannelVisibility.PUBLIC }, { id: { $in: mine } }] },
    ];
    return paginate(this.em, ChatChannel, where, args);
  }

  /** One channel, or null when it does not exist or is private to others. */
  async find(asMember: string, id: string): Promise<ChatChannel | null> {
    const member = await this.access.activeMember(asMember);
    const channel = await this.access.channel(id);
    return channel && (await this.access.seesChannel(channel, member.id)) ? channel : null;
  }

  /** Creates a channel; the creator and `memberIds` join it in the same transaction. */
  async create(args: CreateChatChannelArgs): Promise<ChatChannel> {
    const creator = await this.access.activeMember(args.asMember);
    const memberIds = new Set([creator.id]);
    for (const id of args.memberIds ?? []) memberIds.add((await this.access.activeMember(id, 'memberIds')).id);
    try {
      return await this.em.transactional(async (em) => {
        const channel = em.create(ChatChannel, {
          ...this.access.scope,
          name: args.name,
          description: args.description ?? null,
          visibility: args.private ? ChatChannelVisibility.PRIVATE : ChatChannelVisibility.PUBLIC,
          createdById: creator.id,
        });
        for (const memberId of memberIds) em.create(ChatChannelMember, { channelId: channel.id, memberId });
        await enqueueWebhookEvent(em, this.access.scope, 'channel.created', channelWebhookData(channel, [...memberIds]));
        await em.flush();
        return channel;
      });
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) throw new ChannelNameTakenError(args.name);
      throw error;
    }
  }

  /**
   * The acting member joins a channel it sees, or (with `memberId`) adds another member to a
   * channel it belongs to, which is how private channels grow. Joining twice changes nothing.
   */
  async join(args: JoinChatChannelArgs): Promise<ChatChannel> {
    const actor = await this.access.activeMember(args.asMember);
    const channel = await this.access.visibleChannel(args.channelId, actor.id);
    let joiner = actor;
    if (args.memberId && args.memberId !== actor.id) {
      if (!(await this.access.isChannelMember(channel.id, actor.id))) throw new NotChannelMemberError(channel.id);
      joiner = await this.access.activeMember(args.memberId, 'memberId');
    }
    if (await this.access.isChannelMember(channel.id, joiner.id)) return channel;
    try {
      await this.em.transactional(async (em) => {
        em.create(ChatChannelMember, { channelId: channel.id, memberId: joiner.id });
        await enqueueWebhookEvent(em, this.access.scope, 'channel.member_joined', { channelId: channel.id, memberId: joiner.id, addedById: actor.id });
        await em.flush();
      });
    } catch (error) {
      // A concurrent join of the same member won: the member is in, as asked.
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
    }
    return channel;
  }

  /** The acting member leaves; from then on a private channel's messages and events no longer reach it. */
  async leave(args: LeaveChatChannelArgs): Promise<ChatChannel> {
    const actor = await this.access.activeMember(args.asMember);
    const channel = await this.access.visibleChannel(args.channelId, actor.id);
    await this.em.transactional(async (em) => {
      const removed = await em.nativeDelete(ChatChannelMember, { channelId: channel.id, memberId: actor.id });
      if (removed === 0) throw new NotChannelMemberError(channel.id);
      await enqueueWebhookEvent(em, this.access.scope, 'channel.member_left', { channelId: channel.id, memberId: actor.id });
      await em.flush();
    });
    return channel;
  }
}
