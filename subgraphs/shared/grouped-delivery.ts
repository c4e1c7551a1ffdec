import type { ExecutionResult } from 'graphql';
import type { WebSocket } from 'ws';
import { nextManyFrame, type NextManyMessage } from '../../core/grouped-events.js';
import { pushOf } from './push-stream.js';

type Payload = NextManyMessage['payload'];

/** The TCP sockets whose writes are held until the current tick's work is done. */
const corked = new Set<{ cork(): void; uncork(): void }>();

/**
 * Holds a websocket's writes until the current tick ends, then sends them in one system call.
 * An event for a thousand subscribers is a thousand frames down the one connection the edge
 * keeps per principal: written one by one, each was its own write(2).
 */
export function batchWrites(socket: WebSocket): void {
  const tcp = (socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
  if (!tcp || corked.has(tcp)) return;
  tcp.cork();
  corked.add(tcp);
  process.nextTick(() => {
    corked.delete(tcp);
    tcp.uncork();
  });
}

/**
 * A socket's frames waiting for the end of the tick, in the order they were queued. A payload's
 * newest group takes a subscription only if that subscription has nothing in a later group, so
 * a subscription's events leave in the order it received them.
 */
interface Waiting {
  groups: { payload: Payload; ids: string[] }[];
  /** The newest group of each payload. */
  groupOf: Map<Payload, number>;
  /** The group each subscription was last put in. */
  lastOf: Map<string, number>;
}

const waiting = new Map<WebSocket, Waiting>();

/**
 * Sends what a socket has waiting: one frame per group, listing its subscriptions. Subscribers
 * that share an execution of an event (shared-event-results.ts) hold the very same result
 * object, so they land in one group; any other result is a group of one.
 */
function flush(socket: WebSocket): void {
  const pending = waiting.get(socket);
  if (!pending) return;
  waiting.delete(socket);
  if (socket.readyState !== socket.OPEN) return;
  batchWrites(socket);
  for (const { payload, ids } of pending.groups) socket.send(nextManyFrame(ids, payload));
}

function enqueue(socket: WebSocket, id: string, payload: Payload): void {
  let pending = waiting.get(socket);
  if (!pending) {
    waiting.set(socket, (pending = { groups: [], groupOf: new Map(), lastOf: new Map() }));
    // Every subscriber an event reaches in this tick resumes before the tick's queue empties (they
    // await the same checks and the same shared execution), so the end of the tick gathers them.
    process.nextTick(flush, socket);
  }
  const at = pending.groupOf.get(payload);
  // Joining a group written before one holding this subscription's previous event would send
  // its events out of order (two events in one tick, the second shared with others).
  if (at !== undefined && at >= (pending.lastOf.get(id) ?? -1)) {
    pending.groups[at].ids.push(id);
    pending.lastOf.set(id, at);
    return;
  }
  pending.groups.push({ payload, ids: [id] });
  pending.groupOf.set(payload, pending.groups.length - 1);
  pending.lastOf.set(id, pending.groups.length - 1);
}

/**
 * A subscription on a connection that asked for grouped frames (core/grouped-events.ts): its
 * results go out through `enqueue`, not through graphql-ws's loop, which only waits for the end.
 * `format` turns a result into what the edge may see (masking internal errors): a result
 * without errors is passed as it is, so shared results stay one object and one group.
 *
 * Order is kept: a subscription's waiting frames are flushed before graphql-ws hears of its end
 * (its `complete` or `error` frame is written after), and after return() nothing more is queued.
 * A stream that can push (push-stream.ts) is read that way; any other is pulled.
 */
export function deliverGrouped(
  stream: AsyncIterator<ExecutionResult>,
  socket: WebSocket,
  id: string,
  format: (result: ExecutionResult) => Payload,
): AsyncIterableIterator<ExecutionResult> & { return(): Promise<IteratorResult<ExecutionResult>> } {
  let ended = false;
  let settle!: (step: IteratorResult<ExecutionResult>) => void;
  let fail!: (error: unknown) => void;
  const end = new Promise<IteratorResult<ExecutionResult>>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  // graphql-ws awaits it a few hops after this returns; a failure before then is not unhandled.
  end.catch(() => {});
  const push = pushOf<ExecutionResult>(stream);
  if (push) {
    // The stream calls in with each result (push-stream.ts): no pull, no await per subscriber.
    push({
      next: (result) => {
        if (!ended) enqueue(socket, id, format(result));
      },
      // graphql-ws's loop waits on `end`: it settles even if the flush throws.
      end: () => {
        try {
          flush(socket);
        } finally {
          settle({ done: true, value: undefined });
        }
      },
      fail: (error) => {
        try {
          flush(socket);
        } finally {
          fail(error);
        }
      },
    });
  } else {
    void (async () => {
      try {
        for (let step = await stream.next(); !step.done && !ended; step = await stream.next()) enqueue(socket, id, format(step.value));
        flush(socket);
        settle({ done: true, value: undefined });
      } catch (error) {
        flush(socket);
        fail(error);
      }
    })();
  }
  const iterator = {
    next: () => end,
    async return(): Promise<IteratorResult<ExecutionResult>> {
      try {
        if (!ended) {
          ended = true;
          await stream.return?.();
        }
      } finally {
        // graphql-ws's loop waits on `end`: it must settle even if the stream's return() fails.
        settle({ done: true, value: undefined });
      }
      return { done: true, value: undefined };
    },
    async throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
      await iterator.return();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}
