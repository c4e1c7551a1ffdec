import { createHash } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { GraphQLError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../../../identity/identity.service.js';
import { openIdentityStore } from '../../../identity/index.js';
import { createTestDatabase } from '../../support/database.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openIdentityStore(db.url);
});

afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
});

/** A service on its own EntityManager fork, as the edge makes one per request. */
function identity(): IdentityService {
  return new IdentityService(orm.em.fork());
}

function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return orm.em.getConnection().execute<T[]>(query, params);
}

let accountCounter = 0;
function newAccount(): string {
  return `acct-${process.pid}-${++accountCounter}`;
}

/** The `extensions.code` a promise is rejected with (it must be rejected with a GraphQLError). */
async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  const error = await promise.then(
    () => expect.unreachable('expected a rejection'),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(GraphQLError);
  return (error as GraphQLError).extensions.code;
}

describe('createKey', () => {
  it.each([
    ['live', 'sk_live_'],
    ['test', 'sk_test_'],
    ['text', 'tk_'],
    ['image', 'ik_'],
    ['traceroute', 'trk_'],
  ])('gives a %s key a secret starting with %s', async (kind, prefix) => {
    const key = await identity().createKey({ account: newAccount(), kind });
    expect(key.kind).toBe(kind);
    expect(key.secret.startsWith(prefix)).toBe(true);
    expect(key.secret.length).toBeGreaterThan(prefix.length + 24);
    expect(key.prefix).toBe(key.secret.slice(0, key.prefix.length));
  });

  it('stores only the SHA-256 of the secret', async () => {
    const account = newAccount();
    const key = await identity().createKey({ account, kind: 'live', name: 'ci' });
    const [row] = await sql('select * from identity.api_key where id = ?', [key.id]);
    expect(row.secret_hash).toBe(createHash('sha256').update(key.secret).digest('hex'));
    // The stored prefix shows a few characters; what follows them is nowhere in the row.
    const hidden = key.secret.slice(key.prefix.length);
    for (const [column, value] of Object.entries(row)) {
      expect(String(value), column).not.toContain(hidden);
    }
    expect(row).toMatchObject({ kind: 'live', name: 'ci', prefix: key.prefix, disabled_at: null, expires_at: null });
  });

  it('never lists the secret or its hash', async () => {
    const account = newAccount();
    const key = await identity().createKey({ account, kind: 'image' });
    const listed = await identity().listKeys({ account });
    expect(listed).toEqual([
      {
        id: key.id,
        kind: 'image',
        account,
        name: null,
        prefix: key.prefix,
        livemode: true,
        createdAt: key.createdAt,
        disabledAt: null,
        expiresAt: null,
        lastUsedAt: null,
        hourlyLimit: null,
        dailyLimit: null,
        plan: null,
      },
    ]);
  });

  it('gives traceroute keys the default limits of 100 an hour and 2,000 a day, or their own', async () => {
    const account = newAccount();
    const standard = await identity().createKey({ account, kind: 'traceroute' });
    expect(standard).toMatchObject({ hourlyLimit: 100, dailyLimit: 2000 });
    const own = await identity().createKey({ account, kind: 'traceroute', hourlyLimit: 5, dailyLimit: 50 });
    expect(own).toMatchObject({ hourlyLimit: 5, dailyLimit: 50 });
    const auth = await identity().authenticate(own.secret);
    expect(auth.ok && [auth.key.hourlyLimit, auth.key.dailyLimit]).toEqual([5, 50]);
  });

  it('refuses limits on other kinds, limits below 1, and an expiry in the past', async () => {
    const account = newAccount();
    expect(await codeOf(identity().createKey({ account, kind: 'live', hourlyLimit: 10 }))).toBe('BAD_USER_INPUT');
    expect(await codeOf(identity().createKey({ account, kind: 'traceroute', dailyLimit: 0 }))).toBe('BAD_USER_INPUT');
    expect(await codeOf(identity().createKey({ account, kind: 'traceroute', hourlyLimit: 1.5 }))).toBe('BAD_USER_INPUT');
    expect(await codeOf(identity().createKey({ account, kind: 'live', expiresAt: new Date(Date.now() - 1000) }))).toBe('BAD_USER_INPUT');
  });

  it('re-enables a disabled key, and expiring a key ends it at once', async () => {
    const account = newAccount();
    const key = await identity().createKey({ account, kind: 'traceroute' });
    await identity().disableKey(key.id);
    expect(await identity().authenticate(key.secret)).toMatchObject({ ok: false, reason: 'key_disabled' });
    await identity().enableKey(key.id);
    expect((await identity().authenticate(key.secret)).ok).toBe(true);
    await identity().expireKey(key.id);
    expect(await identity().authenticate(key.secret)).toMatchObject({ ok: false, reason: 'key_expired' });
    expect(await codeOf(identity().enableKey('key_nope'))).toBe('NOT_FOUND');
  });

  it('rejects an unknown kind as BAD_USER_INPUT', async () => {
    expect(await codeOf(identity().createKey({ account: newAccount(), kind: 'gold' }))).toBe('BAD_USER_INPUT');
  });

  it.each(['Acme', 'has space', '-leading-dash', '', 'x'.repeat(65)])(
    'rejects the account name %j as BAD_USER_INPUT and creates no account',
    async (slug) => {
      expect(await codeOf(identity().createKey({ account: slug, kind: 'live' }))).toBe('BAD_USER_INPUT');
      const rows = await sql('select 1 from identity.account where slug = ?', [slug]);
      expect(rows).toHaveLength(0);
    },
  );

  it('creates the account once when two first keys of it are issued at the same time', async () => {
    const account = newAccount();
    const [first, second] = await Promise.all([
      identity().createKey({ account, kind: 'live' }),
      identity().createKey({ account, kind: 'test' }),
    ]);
    expect(first.account).toBe(account);
    expect(second.account).toBe(account);
    const accounts = await sql<{ id: string }>('select id from identity.account where slug = ?', [account]);
    expect(accounts).toHaveLength(1);
    const owners = await sql<{ account_id: string }>('select account_id from identity.api_key where id in (?, ?)', [
      first.id,
      second.id,
    ]);
    expect(owners.map((row) => row.account_id)).toEqual([accounts[0].id, accounts[0].id]);
  });
});

/** The extensions of the GraphQLError a promise is rejected with. */
async function extensionsOf(promise: Promise<unknown>): Promise<Record<string, unknown>> {
  const error = await promise.then(
    () => expect.unreachable('expected a rejection'),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(GraphQLError);
  return (error as GraphQLError).extensions;
}

describe('inference plans', () => {
  const knownPlans = ['standard', 'pro'];

  it('issues text and image keys on the plan named, stored and listed; without one they are on the default (null)', async () => {
    const account = newAccount();
    const pro = await identity().createKey({ account, kind: 'text', plan: 'pro', knownPlans });
    const image = await identity().createKey({ account, kind: 'image', plan: 'standard' });
    const unassigned = await identity().createKey({ account, kind: 'text' });
    expect([pro.plan, image.plan, unassigned.plan]).toEqual(['pro', 'standard', null]);
    const rows = await sql<{ id: string; plan: string | null }>('select id, plan from identity.api_key where id in (?, ?, ?)', [pro.id, image.id, unassigned.id]);
    expect(Object.fromEntries(rows.map((row) => [row.id, row.plan]))).toEqual({ [pro.id]: 'pro', [image.id]: 'standard', [unassigned.id]: null });
    const listed = await identity().listKeys({ account });
    expect(listed.map((key) => [key.id, key.plan])).toEqual([
      [pro.id, 'pro'],
      [image.id, 'standard'],
      [unassigned.id, null],
    ]);
  });

  it('puts the plan in the principal of text and image keys, and leaves it out on the default plan', async () => {
    const account = newAccount();
    const text = await identity().createKey({ account, kind: 'text', plan: 'pro' });
    const image = await identity().createKey({ account, kind: 'image', plan: 'standard' });
    const unassigned = await identity().createKey({ account, kind: 'image' });
    const principal = async (secret: string) => {
      const result = await identity().authenticate(secret);
      return result.ok ? result.principal : expect.unreachable(result.reason);
    };
    expect(await principal(text.secret)).toMatchObject({ keyId: text.id, kind: 'text', plan: 'pro' });
    expect(await principal(image.secret)).toMatchObject({ keyId: image.id, kind: 'image', plan: 'standard' });
    expect(await principal(unassigned.secret)).not.toHaveProperty('plan');
  });

  it.each(['live', 'test', 'traceroute', 'admin'])('refuses a plan on a %s key, naming plan, and issues nothing', async (kind) => {
    const account = newAccount();
    expect(await extensionsOf(identity().createKey({ account, kind, plan: 'pro' }))).toMatchObject({ code: 'BAD_USER_INPUT', param: 'plan' });
    expect(await identity().listKeys({ account })).toEqual([]);
  });

  it('refuses a plan outside the known plans, listing them, and a malformed plan name even without them', async () => {
    const account = newAccount();
    const unknown = await extensionsOf(identity().createKey({ account, kind: 'text', plan: 'gold', knownPlans }));
    expect(unknown).toMatchObject({ code: 'BAD_USER_INPUT', param: 'plan' });
    for (const plan of ['Pro', 'has space', '1st', 'x'.repeat(65), '']) {
      expect(await extensionsOf(identity().createKey({ account, kind: 'text', plan })), plan).toMatchObject({ code: 'BAD_USER_INPUT', param: 'plan' });
    }
    expect(await identity().listKeys({ account })).toEqual([]);
    await expect(identity().createKey({ account, kind: 'text', plan: 'gold', knownPlans })).rejects.toThrow('the plans are standard, pro');
  });

  it('setKeyPlan moves a key to another plan and back to the default, and the next authentication carries it', async () => {
    const key = await identity().createKey({ account: newAccount(), kind: 'text' });
    expect((await identity().setKeyPlan(key.id, 'pro', { knownPlans })).plan).toBe('pro');
    const moved = await identity().authenticate(key.secret);
    expect(moved.ok && moved.principal.plan).toBe('pro');
    expect((await identity().setKeyPlan(key.id, null)).plan).toBeNull();
    const back = await identity().authenticate(key.secret);
    expect(back.ok && back.principal).not.toHaveProperty('plan');
  });

  it('setKeyPlan refuses an unknown plan, a key of another kind, another account\'s key and an unknown id, changing nothing', async () => {
    const account = newAccount();
    const text = await identity().createKey({ account, kind: 'text', plan: 'standard' });
    const live = await identity().createKey({ account, kind: 'live' });
    expect(await extensionsOf(identity().setKeyPlan(text.id, 'gold', { knownPlans }))).toMatchObject({ code: 'BAD_USER_INPUT', param: 'plan' });
    expect(await extensionsOf(identity().setKeyPlan(live.id, 'pro'))).toMatchObject({ code: 'BAD_USER_INPUT', param: 'plan' });
    expect(await extensionsOf(identity().setKeyPlan(text.id, 'pro', { account: newAccount() }))).toMatchObject({ code: 'NOT_FOUND' });
    expect(await extensionsOf(identity().setKeyPlan('key_doesnotexist', 'pro'))).toMatchObject({ code: 'NOT_FOUND' });
    const rows = await sql<{ id: string; plan: string | null }>('select id, plan from identity.api_key where id in (?, ?)', [text.id, live.id]);
    expect(Object.fromEntries(rows.map((row) => [row.id, row.plan]))).toEqual({ [text.id]: 'standard', [live.id]: null });
  });
});

describe('authenticate', () => {
  it('gives the principal of a live key', async () => {
    const account = newAccount();
    const key = await identity().createKey({ account, kind: 'live' });
    const result = await identity().authenticate(key.secret);
    const [row] = await sql<{ id: string }>('select id from identity.account where slug = ?', [account]);
    expect(result.ok && result.principal).toEqual({ accountId: row.id, account, keyId: key.id, kind: 'live', mode: 'live' });
  });

  it('puts a test key in test mode', async () => {
    const key = await identity().createKey({ account: newAccount(), kind: 'test' });
    const result = await identity().authenticate(key.secret);
    expect(result.ok && result.principal).toMatchObject({ keyId: key.id, kind: 'test', mode: 'test' });
  });

  it('refuses an unknown secret as invalid_key', async () => {
    await identity().createKey({ account: newAccount(), kind: 'live' });
    expect(await identity().authenticate('sk_live_not-a-key-anyone-was-given')).toEqual({ ok: false, reason: 'invalid_key' });
  });

  it('refuses a disabled key as key_disabled', async () => {
    const key = await identity().createKey({ account: newAccount(), kind: 'text' });
    const disabled = await identity().disableKey(key.id);
    expect(disabled.disabledAt).not.toBeNull();
    expect(await identity().authenticate(key.secret)).toEqual({ ok: false, reason: 'key_disabled' });
  });

  it('refuses a key from its expiry on as key_expired', async () => {
    const expiresAt = new Date(Date.now() + 60 * 60 * 1000);
    const key = await identity().createKey({ account: newAccount(), kind: 'traceroute', expiresAt });
    expect(key.expiresAt).toBe(expiresAt.toISOString());
    expect((await identity().authenticate(key.secret, new Date(expiresAt.getTime() - 1000))).ok).toBe(true);
    expect(await identity().authenticate(key.secret, expiresAt)).toEqual({ ok: false, reason: 'key_expired' });
    expect(await identity().authenticate(key.secret, new Date(expiresAt.getTime() + 1000))).toEqual({
      ok: false,
      reason: 'key_expired',
    });
  });
});

describe('disableKey', () => {
  it("does not find another account's key, and leaves it enabled", async () => {
    const owner = newAccount();
    const other = newAccount();
    await identity().createKey({ account: other, kind: 'live' });
    const key = await identity().createKey({ account: owner, kind: 'live' });
    expect(await codeOf(identity().disableKey(key.id, other))).toBe('NOT_FOUND');
    expect((await identity().authenticate(key.secret)).ok).toBe(true);
    expect((await identity().disableKey(key.id, owner)).disabledAt).not.toBeNull();
  });

  it('does not find an unknown id', async () => {
    expect(await codeOf(identity().disableKey('key_doesnotexist'))).toBe('NOT_FOUND');
  });

  it('keeps the first disabling time when disabled twice', async () => {
    const key = await identity().createKey({ account: newAccount(), kind: 'live' });
    const first = await identity().disableKey(key.id);
    const second = await identity().disableKey(key.id);
    expect(second.disabledAt).toBe(first.disabledAt);
  });
});
