import type { PlatformPubSub } from './pubsub.js';

/** A bus whose publishes wait for the commit of the transaction a request runs in. */
export interface DeferredPubSub extends PlatformPubSub {
  /** Publishes what waited, in order: the transaction committed. */
  flush(): void;
  /** Drops what waited: the transaction rolled back, so nothing of it happened. */
  discard(): void;
}

/**
 * Events are published after their commit (design: subscriptions). A keyed mutation commits
 * only once its whole answer is kept (idempotent-mutations.plugin.ts), after its services
 * published, so its events wait here until then.
 */
export function deferredPubSub(bus: PlatformPubSub): DeferredPubSub {
  let waiting: [string, unknown][] = [];
  return {
    publish(topic, payload) {
      waiting.push([topic, payload]);
    },
    subscribe: (topic) => bus.subscribe(topic),
    close: () => bus.close(),
    flush() {
      const events = waiting;
      waiting = [];
      for (const [topic, payload] of events) bus.publish(topic, payload);
    },
    discard() {
      waiting = [];
    },
  };
}
