import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../../../identity/identity.service.js';
import { openIdentityStore } from '../../../identity/index.js';
import { KEY_CHANGE_CHANNEL, KeyCache } from '../../../identity/key-cache.js';
import { KeyUseRecorder } from '../../../identity/key-use-recorder.js';
import { createTestDatabase } from '../../support/database.js';

/**
 * The edge's key cache: a looked-up key is reused, and every change reaches it at once, whether
 * made in this process (evicted before the change returns) or by anyone else on the database
 * (the api_key trigger's NOTIFY); an expiry passes on time from the cache; without its LISTEN
 * connection the cache steps aside.
 */
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;
let sql: pg.Client;
const caches: KeyCache[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openIdentityStore(db.url);
  sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
});

afterEach(async () => {
  await Promise.all(caches.splice(0).map((cache) => cache.close()));
});

afterAll(async () => {
  await sql?.end();
  await orm?.close(true);
  await db?.drop();
});

async function listening(ttlMs = 60_000): Promise<KeyCache> {
  const cache = new KeyCache({ ttlMs });
  caches.push(cache);
  await cache.listen(db.url);
  return cache;
}

const service = (keyCache?: KeyCache) => new IdentityService(orm.em.fork(), { keyCache });
const issue = (account = 'cache-co', kind = 'live') => service().createKey({ account, kind });

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the key cache', () => {
  it('answers a key it looked up again without the store, with the same principal', async () => {
    const cache = await listening();
    const { secret } = await issue();
    const first = await service(cache).authenticate(secret);
    const second = await service(cache).authenticate(secret);
    expect(first.ok && second.ok).toBe(true);
    expect(second).toEqual(first);
    expect(cache.stats()).toMatchObject({ hits: 1, size: 1, listening: true });
  });

  it('forgets a key changed in this process before the change returns', async () => {
    const cache = await listening();
    const { id, secret } = await issue();
    expect((await service(cache).authenticate(secret)).ok).toBe(true);
    // Any IdentityService of this process, not the cache's own.
    await service().disableKey(id);
    expect(await service(cache).authenticate(secret)).toEqual({ ok: false, reason: 'key_disabled' });
  });

  it('forgets a key another process changed, through the trigger’s notice', async () => {
    const cache = await listening();
    const { id, secret } = await issue();
    expect((await service(cache).authenticate(secret)).ok).toBe(true);
    // As another instance, the command-line tool or an operator would: straight on the table.
    await sql.query(`update identity.api_key set disabled_at = now() where id = $1`, [id]);
    await until('the notice', async () => !(await service(cache).authenticate(secret)).ok);
    expect(await service(cache).authenticate(secret)).toEqual({ ok: false, reason: 'key_disabled' });
    await sql.query(`delete from identity.api_key where id = $1`, [id]);
    await until('the deletion', async () => (await service(cache).authenticate(secret)).ok === false && cache.stats().size === 0);
  });

  it('records last use once a minute per key without a change notice, so the key stays cached', async () => {
    const notices: string[] = [];
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (message) => notices.push(message.payload ?? ''));
    await listener.query(`listen ${KEY_CHANGE_CHANNEL}`);
    try {
      const { id } = await issue('used-co');
      const recorder = new KeyUseRecorder(orm);
      recorder.record(id);
      recorder.record(id); // the same minute: not written again
      await recorder.flush();
      const [used] = (await service().listKeys({ account: 'used-co' })).map((key) => key.lastUsedAt);
      expect(used).not.toBeNull();
      expect(Date.now() - Date.parse(used!)).toBeLessThan(61_000);
      expect(new Date(used!).getUTCSeconds()).toBe(0);
      // A real change still notifies, and the one notice is that change's.
      await sql.query(`update identity.api_key set disabled_at = now() where id = $1`, [id]);
      await until('the change notice', async () => notices.length > 0);
      expect(notices).toEqual([id]);
    } finally {
      await listener.end();
    }
  });

  it('lets an expiry pass on time, from the cached key', async () => {
    const cache = await listening();
    const { id, secret } = await issue();
    const at = new Date(Date.now() + 60_000);
    await service().expireKey(id, at);
    expect((await service(cache).authenticate(secret, new Date(at.getTime() - 1))).ok).toBe(true);
    const hits = cache.stats().hits;
    expect(await service(cache).authenticate(secret, at)).toEqual({ ok: false, reason: 'key_expired' });
    expect(cache.stats().hits).toBe(hits + 1);
  });

  it('steps aside while its notices are lost, and comes back with them', async () => {
    const cache = await listening();
    const { secret } = await issue();
    await service(cache).authenticate(secret);
    await sql.query(`select pg_terminate_backend(pid) from pg_stat_activity where query like $1 and pid <> pg_backend_pid()`, [`%listen "${KEY_CHANGE_CHANNEL}"%`]);
    await until('the lost connection', async () => !cache.stats().listening);
    expect(cache.stats().size).toBe(0);
    const hits = cache.stats().hits;
    expect((await service(cache).authenticate(secret)).ok).toBe(true);
    expect((await service(cache).authenticate(secret)).ok).toBe(true);
    expect(cache.stats().hits).toBe(hits);
    await until('the notices back', async () => cache.stats().listening);
    await service(cache).authenticate(secret);
    await service(cache).authenticate(secret);
    expect(cache.stats().hits).toBe(hits + 1);
  });

  it('with a TTL of 0 reads the store every time', async () => {
    const cache = await listening(0);
    const { secret } = await issue();
    await service(cache).authenticate(secret);
    await service(cache).authenticate(secret);
    expect(cache.stats()).toMatchObject({ hits: 0, size: 0 });
  });

  it('reads a key again once its time is up', async () => {
    const cache = await listening(50);
    const { secret } = await issue();
    await service(cache).authenticate(secret);
    await new Promise((resolve) => setTimeout(resolve, 80));
    await service(cache).authenticate(secret);
    expect(cache.stats().hits).toBe(0);
  });
});
