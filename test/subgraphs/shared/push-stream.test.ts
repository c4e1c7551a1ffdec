import { describe, expect, it } from 'vitest';
import { createPlatformPubSub } from '../../../subgraphs/shared/pubsub.js';
import { InOrder, PUSH, pushOf, type Sink } from '../../../subgraphs/shared/push-stream.js';

/** A promise settled from outside, to finish works in an order the test chooses. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('InOrder', () => {
  it('hands values over in arrival order when a later work finishes first', async () => {
    const order = new InOrder();
    const seen: string[] = [];
    const first = deferred<string>();
    const second = deferred<string>();
    order.add(() => first.promise, (v) => seen.push(v), (e) => seen.push(`failed ${e}`));
    order.add(() => second.promise, (v) => seen.push(v), (e) => seen.push(`failed ${e}`));
    order.add(() => 'third, at once', (v) => seen.push(v), (e) => seen.push(`failed ${e}`));
    second.resolve('second');
    await settled();
    expect(seen).toEqual([]);
    first.resolve('first');
    await settled();
    expect(seen).toEqual(['first', 'second', 'third, at once']);
  });

  it('keeps going after a work fails, throws, or a receiver throws', async () => {
    const order = new InOrder();
    const seen: string[] = [];
    const done = (v: string) => seen.push(v);
    const fail = (e: unknown) => seen.push(`failed: ${(e as Error).message}`);
    order.add(() => Promise.reject(new Error('rejected')), done, fail);
    order.add(() => {
      throw new Error('thrown');
    }, done, fail);
    order.add(() => 'receiver throws', () => {
      throw new Error('by the receiver');
    }, fail);
    order.add(() => 'after', done, fail);
    await settled();
    expect(seen).toEqual(['failed: rejected', 'failed: thrown', 'failed: by the receiver', 'after']);
  });
});

describe('the bus pushing to a sink', () => {
  it('hands over what was queued, then each event in the publish tick, and nothing after return()', async () => {
    const bus = createPlatformPubSub();
    const stream = bus.subscribe('topic');
    bus.publish('topic', 'queued before');
    const push = pushOf<unknown>(stream);
    expect(push).toBeTypeOf('function');
    const seen: unknown[] = [];
    const sink: Sink<unknown> = { next: (v) => seen.push(v), end: () => seen.push('end'), fail: () => seen.push('fail') };
    push!(sink);
    expect(seen).toEqual(['queued before']);
    bus.publish('topic', 'pushed');
    // In the publish call itself, not a tick later.
    expect(seen).toEqual(['queued before', 'pushed']);
    await stream.return();
    bus.publish('topic', 'after return');
    expect(seen).toEqual(['queued before', 'pushed']);
    await bus.close();
  });

  it('still serves pulls to a consumer that does not push', async () => {
    const bus = createPlatformPubSub();
    const stream = bus.subscribe('topic');
    expect(PUSH in stream).toBe(true);
    bus.publish('topic', 'one');
    await expect(stream.next()).resolves.toEqual({ value: 'one', done: false });
    const pending = stream.next();
    bus.publish('topic', 'two');
    await expect(pending).resolves.toEqual({ value: 'two', done: false });
    await stream.return();
    await expect(stream.next()).resolves.toEqual({ value: undefined, done: true });
    await bus.close();
  });
});
