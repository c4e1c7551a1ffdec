import cluster from 'node:cluster';
import type { Redis } from 'ioredis';
import { RateLimiterCluster, RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract, type RateLimiterRes } from 'rate-limiter-flexible';

/** A fixed window: at most `limit` requests of `subject` per `seconds`, counted under `name`. */
export interface LimitWindow {
  /** Names the window in counters and in the error a breach gives (e.g. `hourly`). */
  name: string;
  seconds: number;
  limit: number;
  /** Whose count this is: an account and mode, a key, or a client address (edge-interfaces.ts decides which). */
  subject: string;
}

export interface WindowState {
  window: LimitWindow;
  /** Requests counted in this window, this one included. */
  count: number;
  remaining: number;
  /** Epoch seconds at which the window ends and the count starts again. */
  resetAt: number;
  /** Seconds until then, rounded up; what a 429's Retry-After says. */
  retryAfter: number;
  exceeded: boolean;
}

// Counters allow far more than any limit: the limit of each key is compared here, so keys
// with their own limits (traceroute) share one counter store per window length.
const COUNTER_CEILING = Number.MAX_SAFE_INTEGER;

/**
 * Counts requests per subject in fixed windows, atomically: in process by default, in Redis (one
 * INCR-and-expire script per hit) when a client is given, so that all instances share one count.
 * A Redis outage falls back to in-process counting rather than failing requests.
 */
export class RateLimiter {
  private readonly counters = new Map<number, RateLimiterAbstract>();

  constructor(private readonly redis?: Redis) {}

  private counter(seconds: number): RateLimiterAbstract {
    let counter = this.counters.get(seconds);
    if (!counter) {
      const memory = new RateLimiterMemory({ points: COUNTER_CEILING, duration: seconds, keyPrefix: `rl${seconds}` });
      counter = this.redis
        ? new RateLimiterRedis({
            storeClient: this.redis,
            points: COUNTER_CEILING,
            duration: seconds,
            keyPrefix: `rl${seconds}`,
            insuranceLimiter: memory,
            // While Redis is away, count in process at once instead of waiting on reconnects.
            rejectIfRedisNotReady: true,
          })
        : cluster.isWorker
          ? // A worker of the edge's cluster (platform/supervisor/edge-cluster.ts): the counters live
            // in the primary, so the workers sharing the port share one count.
            new RateLimiterCluster({ points: COUNTER_CEILING, duration: seconds, keyPrefix: `rl${seconds}`, timeoutMs: 2000 })
          : memory;
      this.counters.set(seconds, counter);
    }
    return counter;
  }

  /** Counts one request in every window, each under its own subject, and reports each window's state. */
  async hit(windows: readonly LimitWindow[], now = Date.now()): Promise<WindowState[]> {
    return Promise.all(
      windows.map(async (window) => {
        const result: RateLimiterRes = await this.counter(window.seconds).consume(`${window.name}:${window.subject}`, 1);
        const resetAt = Math.ceil((now + result.msBeforeNext) / 1000);
        return {
          window,
          count: result.consumedPoints,
          remaining: Math.max(0, window.limit - result.consumedPoints),
          resetAt,
          retryAfter: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
          exceeded: result.consumedPoints > window.limit,
        };
      }),
    );
  }

  /** Takes back one request counted by `hit` in every window (one that must not spend a quota). */
  async refund(windows: readonly LimitWindow[]): Promise<void> {
    await Promise.all(windows.map((window) => this.counter(window.seconds).reward(`${window.name}:${window.subject}`, 1)));
  }

  /** A window's state now, without counting a request (the dashboard's sign-in checks a failure window before it counts a failure). */
  async peek(window: LimitWindow, now = Date.now()): Promise<WindowState> {
    const result = await this.counter(window.seconds).get(`${window.name}:${window.subject}`);
    const count = result?.consumedPoints ?? 0;
    const msBeforeNext = result?.msBeforeNext ?? window.seconds * 1000;
    return {
      window,
      count,
      remaining: Math.max(0, window.limit - count),
      resetAt: Math.ceil((now + msBeforeNext) / 1000),
      retryAfter: Math.max(1, Math.ceil(msBeforeNext / 1000)),
      exceeded: count > window.limit,
    };
  }
}
