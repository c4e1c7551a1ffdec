import type { ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../../../identity/identity.service.js';
import type { KeyKind } from '../../../core/principal.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { run } from '../../support/subgraph-harness.js';

const CAP = 3;
let testbed: MembershipTestbed;

beforeAll(async () => {
  testbed = await startMembershipSubgraph({ maxActiveKeysPerAccount: CAP });
});
afterAll(async () => {
  await testbed?.close();
});

const identity = () => new IdentityService(testbed.identityOrm.em.fork(), { maxActiveKeysPerAccount: CAP });

let accounts = 0;
const newAccount = () => `cap-${process.pid}-${++accounts}`;

async function principalOf(account: string, kind: KeyKind = 'live') {
  const result = await identity().authenticate((await identity().createKey({ account, kind })).secret);
  if (!result.ok) throw new Error(result.reason);
  return result.principal;
}

const CREATE = 'mutation($kind: MembershipKeyKind!) { createApiKey(kind: $kind) { id } }';
const REVOKE = 'mutation($id: ID!) { revokeApiKey(id: $id) { id } }';
const created = (result: ExecutionResult) => (result.data as { createApiKey: { id: string } } | null)?.createApiKey.id;

describe('the cap on active keys per account', () => {
  it('counts live and test keys together and refuses one past the cap with CONFLICT key_limit_reached', async () => {
    const principal = await principalOf(newAccount());
    expect(created(await run(testbed.subgraph, principal, CREATE, { kind: 'TEST' }))).toBeDefined();
    expect(created(await run(testbed.subgraph, principal, CREATE, { kind: 'LIVE' }))).toBeDefined();
    const refused = await run(testbed.subgraph, principal, CREATE, { kind: 'TEST' });
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'key_limit_reached' });
    expect(refused.errors?.[0].message).toContain(`${CAP} active live and test keys`);
    expect(await identity().listKeys({ account: principal.account })).toHaveLength(CAP);
  });

  it('counts only keys that still work: revoking or expiring one frees a place; other kinds never count', async () => {
    const principal = await principalOf(newAccount());
    await identity().createKey({ account: principal.account, kind: 'traceroute' });
    await identity().createKey({ account: principal.account, kind: 'text' });
    const ids = [created(await run(testbed.subgraph, principal, CREATE, { kind: 'TEST' }))!, created(await run(testbed.subgraph, principal, CREATE, { kind: 'TEST' }))!];
    expect((await run(testbed.subgraph, principal, CREATE, { kind: 'TEST' })).errors?.[0].extensions?.reason).toBe('key_limit_reached');

    expect((await run(testbed.subgraph, principal, REVOKE, { id: ids[0] })).errors).toBeUndefined();
    expect(created(await run(testbed.subgraph, principal, CREATE, { kind: 'TEST' }))).toBeDefined();
    expect((await run(testbed.subgraph, principal, CREATE, { kind: 'TEST' })).errors?.[0].extensions?.reason).toBe('key_limit_reached');

    await identity().expireKey(ids[1], new Date(Date.now() - 1000));
    expect(created(await run(testbed.subgraph, principal, CREATE, { kind: 'TEST' }))).toBeDefined();
  });

  it('holds under concurrent creates', async () => {
    const principal = await principalOf(newAccount());
    const results = await Promise.all(Array.from({ length: 8 }, () => run(testbed.subgraph, principal, CREATE, { kind: 'TEST' })));
    expect(results.filter((result) => created(result))).toHaveLength(CAP - 1);
    expect(results.filter((result) => result.errors?.[0].extensions?.reason === 'key_limit_reached')).toHaveLength(8 - (CAP - 1));
    const active = (await identity().listKeys({ account: principal.account })).filter((key) => !key.disabledAt);
    expect(active).toHaveLength(CAP);
  });

  it('refuses to make a disabled or expired key active again past the cap (enable, expire at a later date), and leaves the key as it was', async () => {
    const account = newAccount();
    const store = identity();
    const disabled = await store.createKey({ account, kind: 'live' });
    await store.disableKey(disabled.id);
    const expired = await store.createKey({ account, kind: 'test' });
    await store.expireKey(expired.id, new Date(Date.now() - 1000));
    for (let i = 0; i < CAP; i++) await store.createKey({ account, kind: 'test' });

    await expect(identity().enableKey(disabled.id)).rejects.toMatchObject({ extensions: { code: 'CONFLICT', reason: 'key_limit_reached' } });
    const later = new Date(Date.now() + 3_600_000);
    await expect(identity().expireKey(expired.id, later)).rejects.toMatchObject({ extensions: { code: 'CONFLICT', reason: 'key_limit_reached' } });
    const stored = new Map((await identity().listKeys({ account })).map((key) => [key.id, key]));
    expect(stored.get(disabled.id)?.disabledAt).not.toBeNull();
    expect(new Date(stored.get(expired.id)!.expiresAt!).getTime()).toBeLessThan(Date.now());

    // Changes that add no active key still pass at the cap: moving an active key's expiry, disabling one.
    const active = [...stored.values()].find((key) => key.id !== disabled.id && key.id !== expired.id)!;
    expect((await identity().expireKey(active.id, later)).expiresAt).toBe(later.toISOString());
    await identity().disableKey(active.id);
    // With a place free, the disabled key comes back, and then the cap is full again.
    expect((await identity().enableKey(disabled.id)).disabledAt).toBeNull();
    await expect(identity().enableKey(active.id)).rejects.toMatchObject({ extensions: { reason: 'key_limit_reached' } });
  });

  it('does not cap re-enabling keys of other kinds', async () => {
    const account = newAccount();
    const store = identity();
    const traceroute = await store.createKey({ account, kind: 'traceroute' });
    await store.disableKey(traceroute.id);
    for (let i = 0; i < CAP; i++) await store.createKey({ account, kind: 'live' });
    expect((await identity().enableKey(traceroute.id)).disabledAt).toBeNull();
  });

  it('holds under concurrent re-enables', async () => {
    const account = newAccount();
    const store = identity();
    const ids: string[] = [];
    for (let i = 0; i < CAP + 3; i++) {
      const key = await store.createKey({ account, kind: 'test' });
      await store.disableKey(key.id);
      ids.push(key.id);
    }
    const results = await Promise.allSettled(ids.map((id) => identity().enableKey(id)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(CAP);
    const active = (await identity().listKeys({ account })).filter((key) => !key.disabledAt);
    expect(active).toHaveLength(CAP);
  });

  it('applies to keys issued straight in the key store (the CLI) too, with the default of 20', async () => {
    const account = newAccount();
    const store = new IdentityService(testbed.identityOrm.em.fork());
    for (let i = 0; i < 20; i++) await store.createKey({ account, kind: i % 2 ? 'live' : 'test' });
    await expect(store.createKey({ account, kind: 'live' })).rejects.toMatchObject({ extensions: { code: 'CONFLICT', reason: 'key_limit_reached' } });
    // Kinds outside the membership platform are not capped.
    expect((await store.createKey({ account, kind: 'traceroute' })).kind).toBe('traceroute');
  });
});
