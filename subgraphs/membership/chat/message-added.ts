import type { SubgraphContext } from '../../shared/context.js';
import { ChatAccess } from './chat-access.js';
import { chatTopic, type ChatMessageEvent } from './chat-message-event.js';
import { ChatMessageMode } from './chat-message-mode.js';
import type { ChatMessage } from './chat-message.entity.js';
import { checksFor, END, SKIP } from './message-event-checks.js';
import { ChatTargetError, UnknownMemberError } from './chat.errors.js';

export interface MessageAddedArgs {
  asMember: string;
  channelId?: string | null;
  withMember?: string | null;
}

/** Starts listening at once: a Repeater (the pubsub's iterator) adds its listener only on its first next(). */
function listenNow<T>(iterable: AsyncIterable<T>): AsyncIterator<T> {
  const iterator = iterable[Symbol.asyncIterator]();
  let first: Promise<IteratorResult<T>> | undefined = iterator.next();
  return {
    next: () => {
      const pending = first ?? iterator.next();
      first = undefined;
      return pending;
    },
    return: (value?: unknown) => iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
  };
}

/** Whether the event can concern the subscription at all, before any query. */
function mightMatch(event: ChatMessageEvent, args: MessageAddedArgs, memberId: string): boolean {
  if (args.channelId) return event.kind === ChatMessageMode.CHANNEL && event.channelId === args.channelId;
  const involved = event.senderId === memberId || event.recipientId === memberId;
  if (args.withMember) {
    const other = event.senderId === memberId ? event.recipientId : event.senderId;
    return event.kind === ChatMessageMode.DIRECT && involved && other === args.withMember;
  }
  return event.kind !== ChatMessageMode.DIRECT || involved;
}

/**
 * The stream behind `messageAdded`. Arguments are checked once, when the subscription starts
 * (listening begins before this returns, so every later message is seen). Then, for each
 * event, a fresh EntityManager re-checks that the subscriber may see the message: a member who
 * left a private channel, or was archived, receives nothing more from it.
 */
export async function messageAddedStream(args: MessageAddedArgs, context: SubgraphContext): Promise<AsyncIterableIterator<ChatMessage>> {
  const access = new ChatAccess(context.em.fork(), context.principal);
  const member = await access.activeMember(args.asMember);
  if (args.channelId && args.withMember) throw new ChatTargetError('withMember', 'Give channelId or withMember, not both');
  if (args.channelId) await access.visibleChannel(args.channelId, member.id);
  if (args.withMember && !(await access.anyMember(args.withMember))) throw new UnknownMemberError('withMember', args.withMember);
  const source = listenNow(context.pubsub.subscribe(chatTopic(context.principal)));

  async function* deliver(): AsyncGenerator<ChatMessage> {
    try {
      for (let step = await source.next(); !step.done; step = await source.next()) {
        const event = step.value as ChatMessageEvent;
        if (!mightMatch(event, args, member.id)) continue;
        // Every subscriber of this process checks the same event: the reads are batched, and
        // run side by side.
        const verdict = await checksFor(event, context).verdict(event, member.id, Boolean(args.channelId));
        // An archived member's subscriptions end.
        if (verdict === END) return;
        if (verdict === SKIP) continue;
        const message = verdict;
        // The operation's context lives as long as the subscription: start each event's field
        // resolution (sender, channel, ...) from an empty identity map and fresh loaders. Most
        // subscribers never resolve anything (they share another's execution of the event), and
        // clearing an empty EntityManager still cost a unit-of-work clean-up per event each.
        if (!context.em.getUnitOfWork().getIdentityMap()[Symbol.iterator]().next().done) context.em.clear();
        context.loaders.clear();
        yield message;
      }
    } finally {
      await source.return?.();
    }
  }

  const generator = deliver();
  const stream: AsyncIterableIterator<ChatMessage> = {
    next: () => generator.next(),
    // An async generator waiting for the next event would only see return() when one comes:
    // ending the source first ends that wait, so unsubscribing frees the listener at once.
    return: async (value?: unknown) => {
      await source.return?.();
      return generator.return(value as never);
    },
    throw: (error?: unknown) => generator.throw(error),
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  return stream;
}
