/**
 * A second way to read a subscription's stream, beside its async iterator: the consumer hands
 * over a sink and the stream calls it for each value. graphql-ws needs an iterator per
 * subscription, and a chain of them (the bus, the chat's checks, the shared execution) cost
 * every subscriber of an event a promise and an await per link, with a generator in the middle:
 * about a fifth of a delivery's CPU at a thousand subscribers. A stream that can push says so
 * with PUSH; its consumer pushes on in turn (shared-event-results.ts, grouped-delivery.ts), and
 * a consumer that only pulls (graphql-ws's own loop, a test's client) still calls next().
 *
 * A stream is read one way only: after push() it serves no next(). Its return() still ends it,
 * and then the sink hears nothing more, not even `end`.
 */
export const PUSH = Symbol('push');

export interface Sink<T> {
  next(value: T): void;
  /** The stream ended by itself (not by return()). */
  end(): void;
  fail(error: unknown): void;
}

export interface PushableStream<T> extends AsyncIterableIterator<T> {
  [PUSH]?: (sink: Sink<T>) => void;
  return(value?: unknown): Promise<IteratorResult<T>>;
}

/** The stream's push, when it has one. */
export function pushOf<T>(stream: object): ((sink: Sink<T>) => void) | undefined {
  const push = (stream as PushableStream<T>)[PUSH];
  return typeof push === 'function' ? push.bind(stream) : undefined;
}

/**
 * Keeps one subscriber's values in the order their sources came when each needs async work
 * first (a check, an execution): `add(work, done, fail)` starts `work` at once when nothing is
 * pending, else once the step before has handed its value on, as a pull would. Most events find
 * nothing pending, so they cost one promise reaction, not a chain.
 */
export class InOrder {
  private pending: Promise<void> | null = null;

  add<V>(work: () => V | Promise<V>, done: (value: V) => void, fail: (error: unknown) => void): void {
    let step!: Promise<void>;
    // Nothing pending once the newest step is done; a step chained behind it keeps its place.
    const settled = () => {
      if (this.pending === step) this.pending = null;
    };
    // A failure handler that throws too has nowhere left to report to: no step's promise rejects.
    const failSafely = (error: unknown) => {
      try {
        fail(error);
      } catch {
        // Ignored: the subscription's own end already reports what it can.
      }
    };
    const run = (): Promise<void> => {
      let value: V | Promise<V>;
      try {
        value = work();
      } catch (error) {
        value = Promise.reject(error);
      }
      return Promise.resolve(value).then(
        (result) => {
          settled();
          // A sink that throws fails its own subscription; the steps behind this one still run.
          try {
            done(result);
          } catch (error) {
            failSafely(error);
          }
        },
        (error) => {
          settled();
          failSafely(error);
        },
      );
    };
    step = this.pending ? this.pending.then(run, run) : run();
    this.pending = step;
  }
}
