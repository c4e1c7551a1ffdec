import { setMaxListeners } from 'node:events';
import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { createPubSub } from '@graphql-yoga/subscription';
import { Redis } from 'ioredis';

/** Events between a subgraph's writers and its subscribers, published after the commit. */
export interface PlatformPubSub {
  publish(topic: string, payload: unknown): void;
  subscribe(topic: string): AsyncIterable<unknown>;
  close(): Promise<void>;
}

/**
 * In process by default; through Redis when `redisUrl` is given, so that an event published by
 * one instance reaches subscribers connected to any other.
 */
export function createPlatformPubSub(redisUrl?: string): PlatformPubSub {
  if (!redisUrl) {
    // One listener per subscriber on a topic is expected: thousands on a busy channel are no leak.
    const eventTarget = new EventTarget();
    setMaxListeners(0, eventTarget);
    const pubSub = createPubSub<Record<string, [unknown]>>({ eventTarget });
    return {
      publish: (topic, payload) => pubSub.publish(topic, payload),
      subscribe: (topic) => pubSub.subscribe(topic),
      close: async () => {},
    };
  }
  // Redis needs one connection to publish and another to listen (a subscribed connection can do nothing else).
  const publishClient = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const subscribeClient = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  for (const client of [publishClient, subscribeClient]) client.on('error', () => {});
  const pubSub = createPubSub<Record<string, [unknown]>>({
    eventTarget: createRedisEventTarget({ publishClient, subscribeClient }),
  });
  return {
    publish: (topic, payload) => pubSub.publish(topic, payload),
    subscribe: (topic) => pubSub.subscribe(topic),
    close: async () => {
      publishClient.disconnect();
      subscribeClient.disconnect();
    },
  };
}
