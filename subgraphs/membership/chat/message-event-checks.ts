import DataLoader from 'dataloader';
import type { SubgraphContext } from '../../shared/context.js';
import { UUID } from '../../shared/pagination.js';
import { ChatChannelVisibility } from './chat-channel-visibility.js';
import { ChatChannel } from './chat-channel.entity.js';
import { ChatMessageMode } from './chat-message-mode.js';
import { ChatMessage } from './chat-message.entity.js';
import type { ChatMessageEvent } from './chat-message-event.js';

/** The two tables the checks read as plain rows, in the membership schema this subgraph owns. */
interface CheckTables {
  'membership.member': { id: string; deleted_at: Date | null; account_id: string; mode: string };
  'membership.chat_channel_member': { channel_id: string; member_id: string };
}

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
  private readonly db;
  private readonly members: DataLoader<string, SubscriberState | null>;
  private readonly memberships: DataLoader<string, boolean>;
  private readonly messages = new Map<string, Promise<ChatMessage | null>>();
  private readonly channels = new Map<string, Promise<ChatChannel | null>>();

  constructor(private readonly context: SubgraphContext) {
    this.em = context.em.fork();
    this.db = this.em.getKysely<CheckTables>();
    const scope = { accountId: context.principal.accountId, mode: context.principal.mode };
    // Plain rows of the two columns checked, not entities: a thousand subscribers made a
    // thousand Member entities (every column hydrated and tracked) on every event. Through
    // Kysely with the ids as one array parameter: MikroORM's query builder writes every value
    // into the SQL text, and a thousand ids took it longer to build than PostgreSQL to run.
    this.members = new DataLoader(async (ids) => {
      const valid = ids.filter((id) => UUID.test(id));
      const rows = valid.length
        ? await this.logged(
            this.db
              .selectFrom('membership.member')
              .select(['id', 'deleted_at as deletedAt'])
              .where((eb) => eb.and([eb('id', '=', eb.fn.any(eb.val(valid))), eb('account_id', '=', scope.accountId), eb('mode', '=', scope.mode)])),
          )
        : [];
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    });
    // One `channel_id = $1 and member_id = any($2)` per channel (an event concerns one), not one
    // OR clause per subscriber.
    this.memberships = new DataLoader(async (keys) => {
      const byChannel = new Map<string, string[]>();
      for (const key of keys) {
        const [channelId, memberId] = key.split('|') as [string, string];
        const members = byChannel.get(channelId);
        if (members) members.push(memberId);
        else byChannel.set(channelId, [memberId]);
      }
      const found = new Set<string>();
      for (const [channelId, memberIds] of byChannel) {
        const rows = await this.logged(
          this.db
            .selectFrom('membership.chat_channel_member')
            .select('member_id')
            .where((eb) => eb.and([eb('channel_id', '=', channelId), eb('member_id', '=', eb.fn.any(eb.val(memberIds)))])),
        );
        for (const row of rows) found.add(`${channelId}|${row.member_id}`);
      }
      return keys.map((key) => found.has(key));
    });
    this.scope = scope;
  }

  private readonly scope: { accountId: string; mode: string };

  /** Runs a Kysely query and logs it as MikroORM logs its own (Kysely does not), so traces and statement counts see it. */
  private async logged<T>(query: { compile(): { sql: string; parameters: readonly unknown[] }; execute(): Promise<T[]> }): Promise<T[]> {
    const started = Date.now();
    const rows = await query.execute();
    const { sql, parameters } = query.compile();
    this.em.config.getLogger().logQuery({ query: sql, params: parameters, took: Date.now() - started, results: rows.length });
    return rows;
  }

  /**
   * Starts the reads a subscriber's checks of `event` may need (member, message, and for a
   * channel message the channel and the membership), so that they run side by side. Each is
   * memoised: the checks that follow await the same promises, and their errors surface there.
   */
  prefetch(event: ChatMessageEvent, memberId: string, channelSubscription: boolean): void {
    const ignore = () => {};
    this.member(memberId).catch(ignore);
    this.message(event.messageId).catch(ignore);
    if (event.kind === ChatMessageMode.CHANNEL && event.channelId) {
      if (channelSubscription) this.channel(event.channelId).catch(ignore);
      this.isChannelMember(event.channelId, memberId).catch(ignore);
    }
  }

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

  private channel(id: string): Promise<ChatChannel | null> {
    let channel = this.channels.get(id);
    if (!channel) {
      channel = this.em.findOne(ChatChannel, { id, ...this.scope } as never);
      this.channels.set(id, channel);
    }
    return channel;
  }

  /** Whether `memberId` sees the channel message: a public channel, or one it belongs to. */
  async seesChannelMessage(message: ChatMessage, memberId: string): Promise<boolean> {
    if (message.kind !== ChatMessageMode.CHANNEL || !message.channelId) return false;
    const found = await this.channel(message.channelId);
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
