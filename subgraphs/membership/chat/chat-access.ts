import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../core/principal.js';
import { UUID } from '../../shared/pagination.js';
import { Member } from '../member/member.entity.js';
import { MemberService } from '../member/member.service.js';
import { ChatChannelMember } from './chat-channel-member.entity.js';
import { ChatChannelVisibility } from './chat-channel-visibility.js';
import { ChatChannel } from './chat-channel.entity.js';
import { ChatMessageMode } from './chat-message-mode.js';
import type { ChatMessage } from './chat-message.entity.js';
import { ChannelNotFoundError, UnknownMemberError } from './chat.errors.js';

/**
 * Who may see what in chat, relative to the acting member: every rule lives here, so reads,
 * writes and the per-event checks of subscriptions apply the same ones.
 */
export class ChatAccess {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  /** The member named by `asMember` (or another parameter): of this account and mode, not archived. */
  async activeMember(id: string, param = 'asMember'): Promise<Member> {
    const member = await new MemberService(this.em, this.principal).find(id);
    if (!member) throw new UnknownMemberError(param, id);
    return member;
  }

  /** A member of this account and mode, archived or not (an old conversation is still readable). */
  async anyMember(id: string): Promise<Member | null> {
    const [member] = await new MemberService(this.em, this.principal).findMany([id]);
    return member;
  }

  async channel(id: string): Promise<ChatChannel | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(ChatChannel, { id, ...this.scope });
  }

  async isChannelMember(channelId: string, memberId: string): Promise<boolean> {
    return (await this.em.count(ChatChannelMember, { channelId, memberId })) > 0;
  }

  /** Ids of the channels the member belongs to. */
  async channelIdsOf(memberId: string): Promise<string[]> {
    const rows = await this.em.find(ChatChannelMember, { memberId }, { fields: ['channelId'] });
    return rows.map((row) => row.channelId);
  }

  /** Whether `memberId` sees `channel`: public channels are seen by all, private ones by their members. */
  async seesChannel(channel: ChatChannel, memberId: string): Promise<boolean> {
    return channel.visibility === ChatChannelVisibility.PUBLIC || this.isChannelMember(channel.id, memberId);
  }

  /** The channel if `memberId` sees it; a private channel of others is reported as not found. */
  async visibleChannel(id: string, memberId: string, param = 'channelId'): Promise<ChatChannel> {
    const channel = await this.channel(id);
    if (!channel || !(await this.seesChannel(channel, memberId))) throw new ChannelNotFoundError(id, param);
    return channel;
  }

  /** Whether `memberId` may read `message`: its sender or recipient, any member for a broadcast, a channel's viewers. */
  async mayRead(message: ChatMessage, memberId: string): Promise<boolean> {
    if (message.accountId !== this.principal.accountId || message.mode !== this.principal.mode) return false;
    switch (message.kind) {
      case ChatMessageMode.DIRECT:
        return message.senderId === memberId || message.recipientId === memberId;
      case ChatMessageMode.BROADCAST:
        return true;
      case ChatMessageMode.CHANNEL: {
        const channel = message.channelId ? await this.channel(message.channelId) : null;
        return channel !== null && (await this.seesChannel(channel, memberId));
      }
    }
  }
}
