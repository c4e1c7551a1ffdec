import type { Client, SubscribePayload } from 'graphql-ws';
import type { ExecutionResult } from 'graphql';

/**
 * A subgraph subscription as an async iterator whose `return()` ends it at once: it disposes the
 * upstream operation (graphql-ws sends `complete`, the subgraph stops its source, e.g. aborts a
 * generation) and settles a pending `next()` as done. graphql-ws's own `iterate()` disposes on
 * return but leaves a pending `next()` unsettled, so a client that unsubscribed kept its upstream
 * subscription until the subgraph's next event.
 */
export function upstreamStream(client: Client, payload: SubscribePayload): AsyncIterableIterator<ExecutionResult> & { return(): Promise<IteratorResult<ExecutionResult>> } {
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
  const dispose = client.subscribe<ExecutionResult['data'], ExecutionResult['extensions']>(payload, {
    next: (value) => {
      queue.push(value as ExecutionResult);
      settle();
    },
    error: (error) => {
      failure = { error };
      finished = true;
      settle();
    },
    complete: () => {
      finished = true;
      settle();
    },
  });
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
