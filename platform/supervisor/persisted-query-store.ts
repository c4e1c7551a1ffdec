import type { Worker } from 'node:cluster';
import { isPersistedQueryRequest, type PersistedQueryReply, type PersistedQueryRequest } from '../../edge/federation/persisted-query-cache.js';

/** Queries kept at most; the least recently used go first. Apollo's own in-process default is about 30 MiB. */
const MAX_ENTRIES = 10_000;

/**
 * The automatic persisted queries of one edge's workers, kept in its primary without REDIS_URL
 * (with it they are in Redis), so that a query registered through one worker is found by all.
 */
export class PersistedQueryStore {
  private readonly entries = new Map<string, { value: string; expiresAt: number | null }>();

  /** Answers a worker's message if it is one of the store's; others are left to their listeners. */
  handle(worker: Worker, message: unknown): void {
    if (!isPersistedQueryRequest(message)) return;
    const request = message as PersistedQueryRequest;
    if (request.op === 'get') {
      const reply: PersistedQueryReply = { type: 'apq-reply', id: request.id, value: this.get(request.key) ?? null };
      if (worker.isConnected()) worker.send(reply);
    } else if (request.op === 'set') {
      this.entries.delete(request.key);
      this.entries.set(request.key, { value: request.value, expiresAt: request.ttlSeconds ? Date.now() + request.ttlSeconds * 1000 : null });
      if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    } else {
      this.entries.delete(request.key);
    }
  }

  private get(key: string): string | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== null && entry.expiresAt <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    // Most recently used last: the oldest is dropped first.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }
}
