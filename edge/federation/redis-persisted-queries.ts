import type { Redis } from 'ioredis';
import type { PersistedQueryCache } from './persisted-query-cache.js';

/** Automatic persisted queries in Redis (REDIS_URL): one store for every edge replica and worker. */
export class RedisPersistedQueries implements PersistedQueryCache {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'edge:',
  ) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.prefix + key)) ?? undefined;
  }

  async set(key: string, value: string, options?: { ttl?: number | null }): Promise<void> {
    const ttl = options?.ttl;
    if (ttl) await this.redis.set(this.prefix + key, value, 'EX', Math.ceil(ttl));
    else await this.redis.set(this.prefix + key, value);
  }

  async delete(key: string): Promise<boolean> {
    return (await this.redis.del(this.prefix + key)) > 0;
  }
}
