import pg from 'pg';
import type { Logger } from 'pino';
import type { ApiKey } from './api-key.entity.js';

/** The channel the api_key trigger (Migration20261123005000KeyChanges) notifies with a changed or deleted key's id. */
export const KEY_CHANGE_CHANNEL = 'identity_api_key_changed';

/** Every cache of this process: a change made here is evicted from all of them before the change's caller hears back. */
const LOCAL_CACHES = new Set<KeyCache>();

/** Evicts a key from every cache of this process (IdentityService calls it after each committed change). */
export function evictKeyLocally(keyId: string): void {
  for (const cache of LOCAL_CACHES) cache.evict(keyId);
}

export interface KeyCacheOptions {
  /** How long a looked-up key is reused; 0 turns the cache off. */
  ttlMs: number;
  /** The most keys kept; the oldest go first. */
  maxEntries?: number;
  logger?: Logger;
}

/**
 * The keys the edge has looked up lately, by the hash of their secret, so that a request does not
 * cost a PostgreSQL read. Whatever the TTL, a change reaches every instance at once: a trigger on
 * `identity.api_key` notifies KEY_CHANGE_CHANNEL in the changing transaction (delivered on commit)
 * and every cache LISTENs; a change made in this process is also evicted synchronously. Expiry
 * needs no notice: the refusal is computed from the cached key's dates on every use. While the
 * LISTEN connection is down the cache is bypassed and emptied, so no notice can be missed.
 */
export class KeyCache {
  private readonly entries = new Map<string, { key: ApiKey; at: number }>();
  private readonly hashById = new Map<string, string>();
  private listener: pg.Client | null = null;
  private listening = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private hits = 0;
  private misses = 0;

  constructor(private readonly options: KeyCacheOptions) {
    LOCAL_CACHES.add(this);
  }

  /** Starts listening for changes on the identity database; until it listens, nothing is cached. */
  async listen(databaseUrl: string): Promise<void> {
    if (this.options.ttlMs <= 0 || this.closed) return;
    const client = new pg.Client({ connectionString: databaseUrl });
    const lost = (error?: unknown) => {
      if (this.listener !== client) return;
      const wasListening = this.listening;
      this.listener = null;
      this.listening = false;
      this.clear();
      client.removeAllListeners();
      void client.end().catch(() => undefined);
      if (this.closed) return;
      // Once per outage (a database restart or shutdown ends it this way), not once per retry.
      if (wasListening) this.options.logger?.warn({ reason: error instanceof Error ? error.message : 'connection ended' }, 'key change notices lost: the key cache is off until they are back');
      this.retry = setTimeout(() => void this.listen(databaseUrl).catch(() => undefined), 1_000);
    };
    this.listener = client;
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (message) => {
      if (message.channel === KEY_CHANGE_CHANNEL && message.payload) this.evict(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen "${KEY_CHANGE_CHANNEL}"`);
      // Anything cached before this moment may have missed a notice.
      this.clear();
      this.listening = true;
    } catch (error) {
      lost(error);
    }
  }

  /** The key whose secret has this hash, if it was looked up within the TTL. */
  get(secretHash: string, now = Date.now()): ApiKey | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(secretHash);
    if (!entry || now - entry.at >= this.options.ttlMs) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    return entry.key;
  }

  set(secretHash: string, key: ApiKey, now = Date.now()): void {
    if (!this.listening) return;
    const max = this.options.maxEntries ?? 100_000;
    if (this.entries.size >= max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.dropHash(oldest);
    }
    this.entries.delete(secretHash);
    this.entries.set(secretHash, { key, at: now });
    this.hashById.set(key.id, secretHash);
  }

  evict(keyId: string): void {
    const hash = this.hashById.get(keyId);
    if (hash !== undefined) this.dropHash(hash);
  }

  clear(): void {
    this.entries.clear();
    this.hashById.clear();
  }

  /** Hits and misses since start (a metrics line, and the tests). */
  stats(): { hits: number; misses: number; size: number; listening: boolean } {
    return { hits: this.hits, misses: this.misses, size: this.entries.size, listening: this.listening };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    LOCAL_CACHES.delete(this);
    const client = this.listener;
    this.listener = null;
    this.listening = false;
    this.clear();
    await client?.end().catch(() => undefined);
  }

  private dropHash(hash: string): void {
    const entry = this.entries.get(hash);
    this.entries.delete(hash);
    if (entry && this.hashById.get(entry.key.id) === hash) this.hashById.delete(entry.key.id);
  }
}
