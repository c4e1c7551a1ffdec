import DataLoader from 'dataloader';
import type { SubgraphContext } from '../../shared/context.js';
import { Member } from '../member/member.entity.js';
import { UUID } from '../../shared/pagination.js';
import { ChatChannelMember } from './chat-channel-member.entity.js';
import { ChatChannelVisibility } from './chat-channel-visibility.js';
import { ChatChannel } from './chat-channel.entity.js';
import { ChatMessageMode } from './chat-message-mode.js';
import { ChatMessage } from './chat-message.entity.js';

/** What an event's check reads of a subscriber: whether it is still there, and not archived. */
interface SubscriberState {
  id: string;
  deletedAt: Date | null;
}

/**
 * The per-event checks of every `messageAdded` subscription in this process, batched: the bus
 * hands the same event object to all subscribers of a topic in one tick, so their member,
 * message, channel and membership reads become one statement each instead of one per subscriber.
 * A fresh EntityManager per event keeps every check current.
 */
export class MessageEventChecks {
  private readonly em;
  private readonly members: DataLoader<string, SubscriberState | null>;
  private readonly memberships: DataLoader<string, boolean>;
  private readonly messages = new Map<string, Promise<ChatMessage | null>>();
  private readonly channels = new Map<string, Promise<ChatChannel | null>>();

  constructor(private readonly context: SubgraphContext) {
    this.em = context.em.fork();
    const scope = { accountId: context.principal.accountId, mode: context.principal.mode };
    // Plain rows of the two columns checked, not entities: a thousand subscribers made a
    // thousand Member entities (every column hydrated and tracked) on every event.
    this.members = new DataLoader(async (ids) => {
      const valid = ids.filter((id) => UUID.test(id));
      const rows = valid.length
        ? await this.em
            .createQueryBuilder(Member)
            .select(['id', 'deletedAt'])
            .where({ id: { $in: valid }, accountId: scope.accountId, mode: scope.mode } as never)
            .execute<SubscriberState[]>('all')
        : [];
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    });
    // One `channel_id = ? and member_id in (…)` per channel (an event concerns one), not one OR
    // clause per subscriber.
    this.memberships = new DataLoader(async (keys) => {
      const byChannel = new Map<string, string[]>();
      for (const key of keys) {
        const [channelId, memberId] = key.split('|') as [string, string];
        byChannel.set(channelId, [...(byChannel.get(channelId) ?? []), memberId]);
      }
      const found = new Set<string>();
      for (const [channelId, memberIds] of byChannel) {
        const rows = await this.em
          .createQueryBuilder(ChatChannelMember)
          .select(['memberId'])
          .where({ channelId, memberId: { $in: memberIds } })
          .execute<{ memberId: string }[]>('all');
        for (const row of rows) found.add(`${channelId}|${row.memberId}`);
      }
      return keys.map((key) => found.has(key));
    });
    this.scope = scope;
  }

  private readonly scope: { accountId: string; mode: string };

  member(id: string): Promise<SubscriberState | null> {
    return this.members.load(id);
  }

  message(id: string): Promise<ChatMessage | null> {
    let pending = this.messages.get(id);
    if (!pending) {
      pending = this.em.findOne(ChatMessage, { id, ...this.scope } as never);
      this.messages.set(id, pending);
    }
    return pending;
  }

  isChannelMember(channelId: string, memberId: string): Promise<boolean> {
    return this.memberships.load(`${channelId}|${memberId}`);
  }

  /** Whether `memberId` sees the channel message: a public channel, or one it belongs to. */
  async seesChannelMessage(message: ChatMessage, memberId: string): Promise<boolean> {
    if (message.kind !== ChatMessageMode.CHANNEL || !message.channelId) return false;
    let channel = this.channels.get(message.channelId);
    if (!channel) {
      channel = this.em.findOne(ChatChannel, { id: message.channelId, ...this.scope } as never);
      this.channels.set(message.channelId, channel);
    }
    const found = await channel;
    if (!found) return false;
    return found.visibility === ChatChannelVisibility.PUBLIC || this.isChannelMember(found.id, memberId);
  }
}

const perEvent = new WeakMap<object, MessageEventChecks>();

/** The checks of one event, shared by every subscription that receives it in this process. */
export function checksFor(event: object, context: SubgraphContext): MessageEventChecks {
  let checks = perEvent.get(event);
  if (!checks) {
    checks = new MessageEventChecks(context);
    perEvent.set(event, checks);
  }
  return checks;
}
