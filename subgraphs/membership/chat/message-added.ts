import type { SubgraphContext } from '../../shared/context.js';
import { InOrder, PUSH, pushOf, type PushableStream, type Sink } from '../../shared/push-stream.js';
import { beforeEachExecution } from '../../shared/shared-event-results.js';
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
 * (the bus listens from subscribe() on, so every later message is seen). Then, for each event, a
 * fresh EntityManager re-checks that the subscriber may see the message: a member who left a
 * private channel, or was archived, receives nothing more from it. Read by pulls (its iterator)
 * or by pushes (push-stream.ts), with the same checks, in the order the events came.
 */
export async function messageAddedStream(args: MessageAddedArgs, context: SubgraphContext): Promise<PushableStream<ChatMessage>> {
  const access = new ChatAccess(context.em.fork(), context.principal);
  const member = await access.activeMember(args.asMember);
  if (args.channelId && args.withMember) throw new ChatTargetError('withMember', 'Give channelId or withMember, not both');
  if (args.channelId) await access.visibleChannel(args.channelId, member.id);
  if (args.withMember && !(await access.anyMember(args.withMember))) throw new UnknownMemberError('withMember', args.withMember);
  const source = context.pubsub.subscribe(chatTopic(context.principal));
  const pushSource = pushOf<unknown>(source);
  let ended = false;

  // Every subscriber of this process checks the same event: the reads are batched, and run side by side.
  const check = (event: ChatMessageEvent) => checksFor(event, context).verdict(event, member.id, Boolean(args.channelId));
  // The operation's context lives as long as the subscription: each event's field resolution
  // (sender, channel, ...) starts from an empty identity map and fresh loaders, just before the
  // execution (shared-event-results.ts). Most subscribers never resolve anything (they share
  // another's execution of the event), and clearing an empty EntityManager still cost a
  // unit-of-work clean-up per event each; values() of an empty map is an empty array.
  beforeEachExecution(context, () => {
    if (context.em.getUnitOfWork(false).getIdentityMap().values().length) context.em.clear();
    if (context.loaders.size) context.loaders.clear();
  });

  async function* deliver(): AsyncGenerator<ChatMessage> {
    try {
      for (let step = await source.next(); !step.done; step = await source.next()) {
        const event = step.value as ChatMessageEvent;
        if (!mightMatch(event, args, member.id)) continue;
        const verdict = await check(event);
        // An archived member's subscriptions end.
        if (verdict === END) return;
        if (verdict === SKIP) continue;
        yield verdict;
      }
    } finally {
      await source.return?.();
    }
  }

  const generator = deliver();
  const stream: PushableStream<ChatMessage> = {
    next: () => generator.next(),
    // An async generator waiting for the next event would only see return() when one comes:
    // ending the source first ends that wait, so unsubscribing frees the listener at once.
    return: async (value?: unknown) => {
      ended = true;
      await source.return?.();
      return generator.return(value as never);
    },
    throw: (error?: unknown) => generator.throw(error),
    [Symbol.asyncIterator]() {
      return stream;
    },
  };
  if (pushSource) {
    stream[PUSH] = (sink: Sink<ChatMessage>) => {
      const order = new InOrder();
      const stop = (after: () => void) => {
        if (ended) return;
        ended = true;
        void source.return?.();
        after();
      };
      const failed = (error: unknown) => stop(() => sink.fail(error));
      pushSource({
        next(value) {
          const event = value as ChatMessageEvent;
          if (ended || !mightMatch(event, args, member.id)) return;
          order.add(
            () => check(event),
            (verdict) => {
              if (ended || verdict === SKIP) return;
              // An archived member's subscriptions end.
              if (verdict === END) return stop(() => sink.end());
              sink.next(verdict);
            },
            failed,
          );
        },
        // After the checks of the events before it, as a pull would see them.
        end: () => order.add(() => undefined, () => stop(() => sink.end()), failed),
        fail: (error) => order.add(() => undefined, () => failed(error), failed),
      });
    };
  }
  return stream;
}
