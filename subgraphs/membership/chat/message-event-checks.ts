import type { Kysely } from '@mikro-orm/postgresql';
import type { SubgraphContext } from '../../shared/context.js';
import { UUID } from '../../shared/pagination.js';
import { ChatAccessCaches, type ChatAccessCache } from './chat-access-cache.js';
import { ChatChannelVisibility } from './chat-channel-visibility.js';
import { ChatChannel } from './chat-channel.entity.js';
import { ChatMessageMode } from './chat-message-mode.js';
import { ChatMessage } from './chat-message.entity.js';
import type { ChatMessageEvent } from './chat-message-event.js';

/** The tables the checks read as plain rows, in the membership schema this subgraph owns. */
interface CheckTables {
  'membership.member': { id: string; deleted_at: Date | null; account_id: string; mode: string };
  'membership.chat_channel_member': { channel_id: string; member_id: string };
  /** A bigint, which node-postgres returns as a string. */
  'membership.chat_access_version': { account_id: string; mode: string; version: string };
}

/** What an event's check reads of a subscriber: whether it is still there, and not archived. */
interface SubscriberState {
  id: string;
  deletedAt: Date | null;
}

/**
 * Keys asked for in one tick, read in one statement on the next, with one promise for the whole
 * batch (DataLoader's timing, without a promise and a cache entry per key): five thousand
 * subscribers of one event await the same promise, then look themselves up in its map.
 */
class Batch<V> {
  private keys: Set<string> | null = null;
  private pending: Promise<Map<string, V>> | null = null;
  /** Which batch a join fell in: keys asked for after a batch was sent go in the next one. */
  generation = 0;

  constructor(private readonly read: (keys: string[]) => Promise<Map<string, V>>) {}

  join(key: string): Promise<Map<string, V>> {
    if (!this.keys) {
      const keys = (this.keys = new Set());
      this.generation += 1;
      this.pending = new Promise((resolve, reject) => {
        // After this tick's promise jobs, as DataLoader does: every subscriber one event resumed has joined by then.
        void Promise.resolve().then(() =>
          process.nextTick(() => {
            this.keys = null;
            this.read([...keys]).then(resolve, reject);
          }),
        );
      });
    }
    this.keys.add(key);
    return this.pending!;
  }
}

/** What the checks keep between events, one set per ORM; see ChatAccessCaches. */
const caches = new WeakMap<object, ChatAccessCaches<SubscriberState>>();

/** What a subscriber gets of an event: the message, nothing (SKIP), or the end of its subscription (END: it is gone or archived). */
export const SKIP = Symbol('skip');
export const END = Symbol('end');

/**
 * The per-event checks of every `messageAdded` subscription in this process, batched: the bus
 * hands the same event object to all subscribers of a topic in one tick, so their member,
 * message, channel and membership reads become one statement each instead of one per
 * subscriber, all started at once so that they run side by side. A fresh EntityManager per
 * event keeps every check current.
 */
export class MessageEventChecks {
  private readonly em;
  private readonly db;
  private readonly scope: { accountId: string; mode: string };
  private readonly members: Batch<SubscriberState>;
  private readonly memberships = new Map<string, Batch<boolean>>();
  private readonly messages = new Map<string, Promise<ChatMessage | null>>();
  private readonly channels = new Map<string, Promise<ChatChannel | null>>();
  /** The reads a subscriber awaits, combined once per set of batches: one promise for thousands of subscribers. */
  private readonly combined = new Map<string, Promise<[Map<string, SubscriberState>, ChatMessage | null, Map<string, boolean> | undefined, ChatChannel | null | undefined]>>();
  private readonly cache: ChatAccessCache<SubscriberState>;
  /** The access counter as the batches of this tick found it (see currentVersion). */
  private version: Promise<bigint> | undefined;

  constructor(context: SubgraphContext) {
    this.em = context.em.fork();
    this.db = this.em.getKysely<CheckTables>();
    const scope = (this.scope = { accountId: context.principal.accountId, mode: context.principal.mode });
    let kept = caches.get(context.em.config);
    if (!kept) caches.set(context.em.config, (kept = new ChatAccessCaches()));
    const cache = (this.cache = kept.of(scope.accountId, scope.mode));
    // Plain rows of the two columns checked, not entities: a thousand subscribers made a
    // thousand Member entities (every column hydrated and tracked) on every event. Through
    // Kysely with the ids as one array parameter: MikroORM's query builder writes every value
    // into the SQL text, and a thousand ids took it longer to build than PostgreSQL to run.
    this.members = new Batch((ids) =>
      this.throughCache(
        ids.filter((id) => UUID.test(id)),
        (id) => cache.member(id),
        async (wanted) => {
          const rows = await this.logged(
            this.db
              .selectFrom(this.counter().as('v'))
              .leftJoin('membership.member as m', (join) =>
                join.on((eb) => eb.and([eb('m.id', '=', eb.fn.any(eb.val(wanted))), eb('m.account_id', '=', scope.accountId), eb('m.mode', '=', scope.mode)])),
              )
              .select(['v.version', 'm.id', 'm.deleted_at as deletedAt']),
          );
          const found = new Map<string, SubscriberState>();
          for (const row of rows) if (row.id) found.set(row.id, { id: row.id, deletedAt: row.deletedAt });
          const version = BigInt(rows[0].version);
          cache.keepMembers(version, found);
          return { version, found };
        },
      ),
    );
  }

  /**
   * One `channel_id = $1 and member_id = any($2)` per channel (an event concerns one), not one OR
   * clause per subscriber. Every member asked about gets an answer, in the channel or not.
   */
  private membershipsOf(channelId: string): Batch<boolean> {
    let batch = this.memberships.get(channelId);
    if (!batch) {
      const cache = this.cache;
      batch = new Batch((memberIds) =>
        this.throughCache(
          memberIds,
          (id) => cache.membership(channelId, id),
          async (wanted) => {
            const rows = await this.logged(
              this.db
                .selectFrom(this.counter().as('v'))
                .leftJoin('membership.chat_channel_member as cm', (join) =>
                  join.on((eb) => eb.and([eb('cm.channel_id', '=', channelId), eb('cm.member_id', '=', eb.fn.any(eb.val(wanted)))])),
                )
                .select(['v.version', 'cm.member_id']),
            );
            const members = new Set(rows.map((row) => row.member_id));
            const found = new Map(wanted.map((id) => [id, members.has(id)]));
            const version = BigInt(rows[0].version);
            cache.keepMemberships(version, channelId, found);
            return { version, found };
          },
        ),
      );
      this.memberships.set(channelId, batch);
    }
    return batch;
  }

  /**
   * This scope's access counter as one row, 0 while nothing has bumped it (the triggers make its
   * row at the first change): the reads select from it, so they return it even when no member or
   * membership matches.
   */
  private counter() {
    return this.db.selectNoFrom((eb) =>
      eb.fn
        .coalesce(
          eb.selectFrom('membership.chat_access_version').select('version').where('account_id', '=', this.scope.accountId).where('mode', '=', this.scope.mode),
          eb.val('0'),
        )
        .as('version'),
    );
  }

  /**
   * The access counter now, one row, when every subscriber's state is kept. Shared by the batches
   * sent in the same tick (an event's member and membership batches), not by later ones: a
   * subscriber checked later (pulled late, or after its previous event's work) gets a counter read
   * of its own, so it too sees every change committed before its check.
   */
  private currentVersion(): Promise<bigint> {
    if (!this.version) {
      this.version = this.logged(this.counter()).then((rows) => BigInt(rows[0].version));
      process.nextTick(() => (this.version = undefined));
    }
    return this.version;
  }

  /**
   * The answers for `ids`, from what the cache keeps when the access counter says it is current,
   * else read. `read` reads the ids given together with the counter, in one statement (one
   * snapshot), and offers its rows to the cache. Ids the cache lacks are read; the counter they
   * came with tells whether the rest kept is still current. When it is not (something changed
   * since), every id is read again: a change costs one full read, once per scope and process.
   */
  private async throughCache<V>(
    ids: string[],
    cached: (id: string) => V | undefined,
    read: (ids: string[]) => Promise<{ version: bigint; found: Map<string, V> }>,
  ): Promise<Map<string, V>> {
    if (!ids.length) return new Map();
    const missing = ids.filter((id) => cached(id) === undefined);
    const fresh = missing.length ? await read(missing) : undefined;
    if (fresh && missing.length === ids.length) return fresh.found;
    const version = fresh ? fresh.version : await this.currentVersion();
    if (this.cache.isAt(version)) {
      const answers = new Map(fresh?.found);
      const readNow = new Set(missing);
      let complete = true;
      for (const id of ids) {
        if (readNow.has(id)) continue;
        const kept = cached(id);
        // Let go meanwhile (the cache's bound): read everything instead.
        if (kept === undefined) {
          complete = false;
          break;
        }
        answers.set(id, kept);
      }
      if (complete) return answers;
    }
    return (await read(ids)).found;
  }

  /**
   * Runs a Kysely query and logs it as MikroORM logs its own (Kysely does not), so traces and
   * statement counts see it. Compiled once: the log and the execution share the statement
   * (`execute` is in the parameter's type only so that the rows' type is the builder's).
   */
  private async logged<T>(query: { compile(): Extract<Parameters<Kysely<CheckTables>['executeQuery']>[0], { sql: string }>; execute(): Promise<T[]> }): Promise<T[]> {
    const started = Date.now();
    const compiled = query.compile();
    const { rows } = (await this.db.executeQuery(compiled)) as { rows: T[] };
    this.em.config.getLogger().logQuery({ query: compiled.sql, params: compiled.parameters, took: Date.now() - started, results: rows.length });
    return rows;
  }

  /** The message or channel `id` of this account and mode, read once for every subscriber. */
  private once<T extends ChatMessage | ChatChannel>(reads: Map<string, Promise<T | null>>, entity: new () => T, id: string): Promise<T | null> {
    let pending = reads.get(id);
    if (!pending) reads.set(id, (pending = this.em.findOne(entity, { id, ...this.scope } as never) as Promise<T | null>));
    return pending;
  }

  /**
   * Whether member `memberId` receives `event`: the message when it may see it, SKIP when not
   * (gone since, or a channel it does not see), END when the member is gone or archived (its
   * subscriptions end). `channelSubscription`: it subscribed to one channel (a public channel's
   * messages reach it without membership), else to all its messages (its channels' only).
   */
  async verdict(event: ChatMessageEvent, memberId: string, channelSubscription: boolean): Promise<ChatMessage | typeof SKIP | typeof END> {
    const channelId = event.kind === ChatMessageMode.CHANNEL ? event.channelId : null;
    const states = this.members.join(memberId);
    const memberships = channelId ? this.membershipsOf(channelId) : undefined;
    const inChannel = memberships?.join(memberId);
    const key = `${this.members.generation}|${memberships?.generation ?? ''}|${channelSubscription}`;
    let reads = this.combined.get(key);
    if (!reads) {
      reads = Promise.all([
        states,
        this.once(this.messages, ChatMessage, event.messageId),
        inChannel,
        channelId && channelSubscription ? this.once(this.channels, ChatChannel, channelId) : undefined,
      ]);
      this.combined.set(key, reads);
    }
    const [members, message, channelMembers, channel] = await reads;
    const subscriber = members.get(memberId);
    if (!subscriber || subscriber.deletedAt) return END;
    if (!message) return SKIP;
    if (message.kind !== ChatMessageMode.CHANNEL) return message;
    // The event named the channel the message is in; a message is never moved.
    if (message.channelId !== channelId) return SKIP;
    const member = channelMembers?.get(memberId) ?? false;
    if (!channelSubscription) return member ? message : SKIP;
    if (!channel) return SKIP;
    return channel.visibility === ChatChannelVisibility.PUBLIC || member ? message : SKIP;
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
