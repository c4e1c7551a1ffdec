/** How long to wait before restarting a service that exited: doubling from `baseMs` up to `maxMs`. */
export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
  /** A run at least this long counts as healthy: the next crash starts again from `baseMs`. */
  stableMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { baseMs: 500, maxMs: 30_000, stableMs: 30_000 };

/** The delay before restart number `attempt` (1 for the first restart after a healthy run). */
export function restartDelay(attempt: number, settings: BackoffSettings = DEFAULT_BACKOFF): number {
  return Math.min(settings.maxMs, settings.baseMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * Counts consecutive crashes of one service: a crash soon after the last start doubles the wait,
 * one after a long healthy run starts from the base again.
 */
export class RestartBackoff {
  private attempts = 0;
  private startedAt = Date.now();

  constructor(private readonly settings: BackoffSettings = DEFAULT_BACKOFF) {}

  started(now = Date.now()): void {
    this.startedAt = now;
  }

  /** The wait before the next start, after an exit at `now`. */
  next(now = Date.now()): number {
    if (now - this.startedAt >= this.settings.stableMs) this.attempts = 0;
    this.attempts += 1;
    return restartDelay(this.attempts, this.settings);
  }
}
