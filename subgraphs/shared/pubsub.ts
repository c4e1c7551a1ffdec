import { createRedisEventTarget } from '@graphql-yoga/redis-event-target';
import { Redis } from 'ioredis';
import { PUSH, type PushableStream, type Sink } from './push-stream.js';

/** Events between a subgraph's writers and its subscribers, published after the commit. */
export interface PlatformPubSub {
  publish(topic: string, payload: unknown): void;
  /** An iterator that can also push (push-stream.ts). */
  subscribe(topic: string): PushableStream<unknown>;
  close(): Promise<void>;
  /** Resolves when the bus's broker answers (Redis with REDIS_URL); absent in process. */
  ping?(): Promise<unknown>;
}

type Listener = (event: { detail: unknown }) => void;

/** The part of an EventTarget the bus uses: yoga's Redis event target has this shape. */
interface Topics {
  addEventListener(topic: string, listener: Listener): void;
  removeEventListener(topic: string, listener: Listener): void;
  dispatchEvent(event: { type: string; detail: unknown }): boolean;
}

/** Listeners by topic in this process: a thousand subscribers of a topic are no leak. */
function localTopics(): Topics {
  const listeners = new Map<string, Set<Listener>>();
  return {
    addEventListener(topic, listener) {
      let set = listeners.get(topic);
      if (!set) listeners.set(topic, (set = new Set()));
      set.add(listener);
    },
    removeEventListener(topic, listener) {
      const set = listeners.get(topic);
      set?.delete(listener);
      if (set?.size === 0) listeners.delete(topic);
    },
    dispatchEvent(event) {
      for (const listener of listeners.get(event.type) ?? []) listener(event);
      return true;
    },
  };
}

/**
 * One subscriber's events as an async iterator: a queue, a pending next() settled by the next
 * event, and return() that removes the listener at once (settling a pending next() as done).
 * Every subscriber of a topic receives the same payload object of an event, which the chat's
 * per-event checks and shared executions key on. This replaces yoga's createPubSub, whose
 * Repeater per subscriber and Node's EventTarget cost a thousand subscribers of one channel
 * about 11 ms of every message before the first of them saw it. A consumer that asks for pushes
 * gets each event by a call, in the same tick as the publish.
 */
function subscribe(topics: Topics, topic: string): PushableStream<unknown> {
  const queue: unknown[] = [];
  let waiting: ((step: IteratorResult<unknown>) => void) | null = null;
  /** The consumer's sink once it asked for pushes (push-stream.ts): events go straight to it. */
  let sink: Sink<unknown> | null = null;
  let ended = false;
  // The publisher (a committed mutation, or Redis's reader) must not see a subscriber's failure.
  const pushTo = (to: Sink<unknown>, detail: unknown) => {
    try {
      to.next(detail);
    } catch (error) {
      to.fail(error);
    }
  };
  const listener: Listener = (event) => {
    if (sink) return pushTo(sink, event.detail);
    if (!waiting) {
      queue.push(event.detail);
      return;
    }
    const resolve = waiting;
    waiting = null;
    resolve({ value: event.detail, done: false });
  };
  topics.addEventListener(topic, listener);
  const iterator: PushableStream<unknown> = {
    next() {
      if (queue.length) return Promise.resolve({ value: queue.shift(), done: false });
      if (ended) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    [PUSH](to: Sink<unknown>) {
      if (ended) return;
      sink = to;
      for (const detail of queue.splice(0)) pushTo(to, detail);
    },
    return() {
      if (!ended) {
        ended = true;
        sink = null;
        queue.length = 0;
        topics.removeEventListener(topic, listener);
        waiting?.({ value: undefined, done: true });
        waiting = null;
      }
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/**
 * In process by default; through Redis when `redisUrl` is given, so that an event published by
 * one instance reaches subscribers connected to any other.
 */
export function createPlatformPubSub(redisUrl?: string): PlatformPubSub {
  if (!redisUrl) return busOver(localTopics(), async () => {});
  // Redis needs one connection to publish and another to listen (a subscribed connection can do nothing else).
  const publishClient = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const subscribeClient = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  for (const client of [publishClient, subscribeClient]) client.on('error', () => {});
  // It parses each message once and hands the same event to every listener of the topic.
  const bus = busOver(createRedisEventTarget({ publishClient, subscribeClient }) as unknown as Topics, async () => {
    publishClient.disconnect();
    subscribeClient.disconnect();
  });
  return { ...bus, ping: () => publishClient.ping() };
}

function busOver(topics: Topics, close: () => Promise<void>): PlatformPubSub {
  return {
    publish: (topic, payload) => void topics.dispatchEvent({ type: topic, detail: payload }),
    subscribe: (topic) => subscribe(topics, topic),
    close,
  };
}
