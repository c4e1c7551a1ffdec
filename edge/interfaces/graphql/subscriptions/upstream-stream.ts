import type { Client, SubscribePayload } from 'graphql-ws';
import type { ExecutionResult } from 'graphql';
import { listenGrouped } from './grouped-frames.js';

/**
 * A subgraph subscription as an async iterator whose `return()` ends it at once: it disposes the
 * upstream operation (graphql-ws sends `complete`, the subgraph stops its source, e.g. aborts a
 * generation) and settles a pending `next()` as done. graphql-ws's own `iterate()` disposes on
 * return but leaves a pending `next()` unsettled, so a client that unsubscribed kept its upstream
 * subscription until the subgraph's next event.
 *
 * With `deliver`, events are handed to it as they come and never queued: `next()` then only
 * settles when the subscription ends (done, or the upstream's error). Without it, events wait for
 * next(); `backlog` is told how many wait once more than `backlog.max` do (a consumer that fell behind).
 */
export function upstreamStream(
  client: Client,
  payload: SubscribePayload,
  deliver?: (event: ExecutionResult) => void,
  backlog?: { max: number; exceeded(queued: number): void },
): AsyncIterableIterator<ExecutionResult> & { return(): Promise<IteratorResult<ExecutionResult>> } {
  const queue: ExecutionResult[] = [];
  let waiting: { resolve: (result: IteratorResult<ExecutionResult>) => void; reject: (error: unknown) => void } | null = null;
  let finished = false;
  let failure: { error: unknown } | null = null;
  const settle = () => {
    if (!waiting) return;
    const { resolve, reject } = waiting;
    waiting = null;
    if (queue.length) resolve({ value: queue.shift()!, done: false });
    else if (failure) reject(failure.error);
    else if (finished) resolve({ value: undefined, done: true });
  };
  let stopGrouped = () => {};
  const receive = (value: ExecutionResult) => {
    if (finished) return;
    if (deliver) return deliver(value);
    queue.push(value);
    settle();
    if (backlog && queue.length > backlog.max) backlog.exceeded(queue.length);
  };
  const unsubscribe = client.subscribe<ExecutionResult['data'], ExecutionResult['extensions']>(payload, {
    next: (value) => receive(value as ExecutionResult),
    error: (error) => {
      failure = { error };
      finished = true;
      stopGrouped();
      settle();
    },
    complete: () => {
      finished = true;
      stopGrouped();
      settle();
    },
  });
  // The subgraph's grouped frames for this subscription (grouped-frames.ts).
  stopGrouped = listenGrouped(payload, receive);
  const dispose = () => {
    stopGrouped();
    unsubscribe();
  };
  const iterator = {
    [Symbol.asyncIterator]() {
      return iterator;
    },
    next(): Promise<IteratorResult<ExecutionResult>> {
      if (queue.length) return Promise.resolve({ value: queue.shift()!, done: false });
      if (failure) return Promise.reject(failure.error);
      if (finished) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
      });
    },
    async return(): Promise<IteratorResult<ExecutionResult>> {
      if (!finished) {
        finished = true;
        queue.length = 0;
        dispose();
      }
      settle();
      return { value: undefined, done: true };
    },
  };
  return iterator;
}
