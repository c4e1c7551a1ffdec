import { isPersistedQueryReply, type PersistedQueryCache, type PersistedQueryRequest } from './persisted-query-cache.js';

/** How long a worker waits for its primary's answer; past it the query is not found, and the client sends it whole. */
const REPLY_TIMEOUT_MS = 2000;

/**
 * An edge worker's view of its cluster's one store of automatic persisted queries, kept by the
 * primary (platform/supervisor/persisted-query-store.ts) and asked over the cluster's IPC channel.
 */
export class ClusterPersistedQueries implements PersistedQueryCache {
  private nextId = 0;
  private readonly waiting = new Map<number, (value: string | undefined) => void>();

  constructor() {
    process.on('message', (message: unknown) => {
      if (!isPersistedQueryReply(message)) return;
      this.waiting.get(message.id)?.(message.value ?? undefined);
    });
  }

  get(key: string): Promise<string | undefined> {
    const id = ++this.nextId;
    return new Promise((resolve) => {
      const done = (value: string | undefined) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(value);
      };
      const timer = setTimeout(() => done(undefined), REPLY_TIMEOUT_MS);
      this.waiting.set(id, done);
      if (!this.send({ type: 'apq', op: 'get', id, key })) done(undefined);
    });
  }

  async set(key: string, value: string, options?: { ttl?: number | null }): Promise<void> {
    this.send({ type: 'apq', op: 'set', key, value, ttlSeconds: options?.ttl ?? null });
  }

  async delete(key: string): Promise<void> {
    this.send({ type: 'apq', op: 'delete', key });
  }

  /** False when there is no channel to the primary (it is gone: this worker is stopping). */
  private send(message: PersistedQueryRequest): boolean {
    if (!process.send || !process.connected) return false;
    process.send(message);
    return true;
  }
}
