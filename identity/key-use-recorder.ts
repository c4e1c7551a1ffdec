import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';

/** Past this many keys remembered, the memory of recent writes starts afresh (a write too many, never too few). */
const MAX_REMEMBERED = 100_000;

/**
 * Records when each key last authenticated a request (Settings, API Keys: "last used"), to the
 * minute: each edge process writes a key at most once a minute, off the request's path (the
 * request never waits for it), and the update is skipped in SQL when another process already
 * wrote this minute. The write is not a change of the key: it raises no key-change notice
 * (Migration20261123110000KeyLastUsed), so key caches stay warm.
 */
export class KeyUseRecorder {
  private readonly written = new Map<string, number>();
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly orm: MikroORM,
    private readonly logger?: Logger,
    private readonly everyMs = 60_000,
  ) {}

  record(keyId: string, now = Date.now()): void {
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < this.everyMs) return;
    if (this.written.size >= MAX_REMEMBERED) this.written.clear();
    this.written.set(keyId, now);
    const write = this.orm.em
      .getConnection()
      .execute(
        `update "identity"."api_key" set "last_used_at" = date_trunc('minute', now())
          where "id" = ? and ("last_used_at" is null or "last_used_at" < date_trunc('minute', now()))`,
        [keyId],
        'run',
      )
      .catch((error: unknown) => this.logger?.warn({ err: error, keyId }, 'could not record when a key was last used'))
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  /** Waits for the writes under way (before the key store closes). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}
