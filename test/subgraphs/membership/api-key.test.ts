import type { MikroORM } from '@mikro-orm/postgresql';
import { createHash } from 'node:crypto';
import type { ExecutionResult, GraphQLFormattedError } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../../../identity/identity.service.js';
import type { KeyKind, Principal } from '../../../core/principal.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { run } from '../../support/subgraph-harness.js';

let identityOrm: MikroORM;
let subgraph: Subgraph;
let testbed: MembershipTestbed;

beforeAll(async () => {
  ({ identityOrm, subgraph } = testbed = await startMembershipSubgraph());
});

afterAll(async () => {
  await testbed?.close();
});

interface ApiKeyView {
  id: string;
  kind: string;
  name: string | null;
  prefix: string;
  livemode: boolean;
  createdAt: string;
  disabledAt: string | null;
  expiresAt: string | null;
}

const KEY_FIELDS = 'id kind name prefix livemode createdAt disabledAt expiresAt';
const LIST = `{ apiKeys { ${KEY_FIELDS} } }`;
const CREATE = `mutation($kind: MembershipKeyKind!, $name: String) { createApiKey(kind: $kind, name: $name) { ${KEY_FIELDS} secret } }`;
const REVOKE = `mutation($id: ID!) { revokeApiKey(id: $id) { ${KEY_FIELDS} } }`;

/** A service on its own fork, as the edge makes one per request. */
function identity(): IdentityService {
  return new IdentityService(identityOrm.em.fork());
}

/** Issues a key as the CLI would, and the principal the edge makes of its secret. */
async function issued(account: string, kind: KeyKind = 'live', name?: string) {
  const key = await identity().createKey({ account, kind, name });
  const result = await identity().authenticate(key.secret);
  if (!result.ok) throw new Error(`a fresh key failed to authenticate: ${result.reason}`);
  return { key, principal: result.principal };
}

let accountCounter = 0;
function newAccount(): string {
  return `keys-${process.pid}-${++accountCounter}`;
}

/** The data as a client receives it: the DateTime scalar gives Dates until JSON turns them to strings. */
function ok<T>(result: ExecutionResult<T>): T {
  expect(result.errors).toBeUndefined();
  return JSON.parse(JSON.stringify(result.data)) as T;
}

function firstError(result: ExecutionResult): GraphQLFormattedError {
  expect(result.errors?.length, 'expected a GraphQL error').toBeGreaterThan(0);
  return result.errors![0];
}

async function listKeys(principal: Principal): Promise<ApiKeyView[]> {
  return ok(await run<{ apiKeys: ApiKeyView[] }>(subgraph, principal, LIST)).apiKeys;
}

describe('apiKeys', () => {
  it("lists a live key's account's live and test keys, and nothing of other kinds or accounts", async () => {
    const account = newAccount();
    const live = await issued(account, 'live', 'first');
    const test = await issued(account, 'test', 'sandbox');
    await issued(account, 'traceroute');
    await issued(account, 'text');
    const elsewhere = await issued(newAccount(), 'live');

    const keys = await listKeys(live.principal);
    expect(keys.map((k) => k.id).sort()).toEqual([live.key.id, test.key.id].sort());
    expect(keys.map((k) => k.id)).not.toContain(elsewhere.key.id);
    expect(keys.find((k) => k.id === live.key.id)).toEqual({
      id: live.key.id,
      kind: 'live',
      name: 'first',
      prefix: live.key.prefix,
      livemode: true,
      createdAt: live.key.createdAt,
      disabledAt: null,
      expiresAt: null,
    });
    expect(keys.find((k) => k.id === test.key.id)).toMatchObject({ kind: 'test', name: 'sandbox', livemode: false });
  });

  it('never shows a secret: asking apiKeys for one is a validation error', async () => {
    const { principal } = await issued(newAccount());
    const result = await run(subgraph, principal, '{ apiKeys { id secret } }');
    expect(result.data).toBeUndefined();
    expect(firstError(result).message).toMatch(/Cannot query field "secret" on type "ApiKey"/);
  });

  it('shows a test key only the test keys of its account', async () => {
    const account = newAccount();
    const live = await issued(account, 'live');
    const test = await issued(account, 'test');
    const otherTest = await issued(account, 'test');
    await issued(newAccount(), 'test');

    const keys = await listKeys(test.principal);
    expect(keys.map((k) => k.id).sort()).toEqual([test.key.id, otherTest.key.id].sort());
    expect(keys.every((k) => k.kind === 'test' && !k.livemode)).toBe(true);
    expect(keys.map((k) => k.id)).not.toContain(live.key.id);
  });
});

describe('createApiKey', () => {
  it('returns the secret once, and the new key authenticates as the same account', async () => {
    const account = newAccount();
    const { principal } = await issued(account, 'live');
    const created = ok(
      await run<{ createApiKey: ApiKeyView & { secret: string } }>(subgraph, principal, CREATE, { kind: 'LIVE', name: 'CI' }),
    ).createApiKey;
    expect(created).toMatchObject({ kind: 'live', name: 'CI', livemode: true, disabledAt: null });
    expect(created.secret).toMatch(/^sk_live_[A-Za-z0-9_-]{24,}$/);
    expect(created.secret.startsWith(created.prefix)).toBe(true);
    expect(created.prefix.length).toBeLessThan(created.secret.length);

    const authenticated = await identity().authenticate(created.secret);
    expect(authenticated.ok && authenticated.principal).toMatchObject({
      accountId: principal.accountId,
      account,
      keyId: created.id,
      kind: 'live',
      mode: 'live',
    });

    // Only the hash is kept: the secret appears nowhere in the stored row.
    const rows = await identityOrm.em
      .getConnection()
      .execute<Record<string, unknown>[]>('select * from identity.api_key where id = ?', [created.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].secret_hash).toBe(createHash('sha256').update(created.secret).digest('hex'));
    expect(JSON.stringify(rows[0])).not.toContain(created.secret);

    const listed = await listKeys(principal);
    expect(listed.find((k) => k.id === created.id)).toMatchObject({ name: 'CI', prefix: created.prefix });
  });

  it('lets a live key create a test key', async () => {
    const { principal } = await issued(newAccount(), 'live');
    const created = ok(await run<{ createApiKey: ApiKeyView & { secret: string } }>(subgraph, principal, CREATE, { kind: 'TEST' }))
      .createApiKey;
    expect(created).toMatchObject({ kind: 'test', livemode: false, name: null });
    expect(created.secret).toMatch(/^sk_test_/);
    const authenticated = await identity().authenticate(created.secret);
    expect(authenticated.ok && authenticated.principal.mode).toBe('test');
  });

  it('lets a test key create test keys but not live ones (FORBIDDEN)', async () => {
    const account = newAccount();
    const test = await issued(account, 'test');
    const before = await identity().listKeys({ account });

    const refused = firstError(await run(subgraph, test.principal, CREATE, { kind: 'LIVE', name: 'escalation' }));
    expect(refused.extensions).toMatchObject({ code: 'FORBIDDEN', param: 'kind' });
    expect(await identity().listKeys({ account })).toEqual(before);

    const created = ok(await run<{ createApiKey: ApiKeyView & { secret: string } }>(subgraph, test.principal, CREATE, { kind: 'TEST' }))
      .createApiKey;
    expect(created.kind).toBe('test');
    expect((await listKeys(test.principal)).map((k) => k.id).sort()).toEqual([test.key.id, created.id].sort());
  });

  it('refuses a name over 120 characters with BAD_USER_INPUT', async () => {
    const { principal } = await issued(newAccount(), 'live');
    const error = firstError(await run(subgraph, principal, CREATE, { kind: 'TEST', name: 'n'.repeat(121) }));
    expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'name' });
  });

  it('refuses a kind outside live and test at validation', async () => {
    const { principal } = await issued(newAccount(), 'live');
    const result = await run(subgraph, principal, CREATE, { kind: 'TRACEROUTE' });
    expect(result.data).toBeUndefined();
    expect(firstError(result).message).toMatch(/MembershipKeyKind/);
  });
});

describe('revokeApiKey', () => {
  it("answers NOT_FOUND for another account's key and leaves it working", async () => {
    const mine = await issued(newAccount(), 'live');
    const theirs = await issued(newAccount(), 'live');
    const error = firstError(await run(subgraph, mine.principal, REVOKE, { id: theirs.key.id }));
    expect(error.extensions).toMatchObject({ code: 'NOT_FOUND', param: 'id' });
    expect((await identity().authenticate(theirs.key.secret)).ok).toBe(true);
  });

  it('answers NOT_FOUND when a test key revokes a live key of its own account', async () => {
    const account = newAccount();
    const live = await issued(account, 'live');
    const test = await issued(account, 'test');
    const error = firstError(await run(subgraph, test.principal, REVOKE, { id: live.key.id }));
    expect(error.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect((await identity().authenticate(live.key.secret)).ok).toBe(true);
  });

  it('answers NOT_FOUND for a key of another kind in the same account', async () => {
    const account = newAccount();
    const live = await issued(account, 'live');
    const traceroute = await issued(account, 'traceroute');
    const error = firstError(await run(subgraph, live.principal, REVOKE, { id: traceroute.key.id }));
    expect(error.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect((await identity().authenticate(traceroute.key.secret)).ok).toBe(true);
  });

  it('disables a key: listed with disabledAt, and refused afterwards with key_disabled', async () => {
    const account = newAccount();
    const live = await issued(account, 'live');
    const created = ok(await run<{ createApiKey: ApiKeyView & { secret: string } }>(subgraph, live.principal, CREATE, { kind: 'TEST' }))
      .createApiKey;
    expect((await identity().authenticate(created.secret)).ok).toBe(true);

    const revoked = ok(await run<{ revokeApiKey: ApiKeyView }>(subgraph, live.principal, REVOKE, { id: created.id })).revokeApiKey;
    expect(revoked.id).toBe(created.id);
    expect(revoked.disabledAt).not.toBeNull();
    expect(Math.abs(Date.parse(revoked.disabledAt!) - Date.now())).toBeLessThan(60_000);

    expect(await identity().authenticate(created.secret)).toEqual({ ok: false, reason: 'key_disabled' });
    expect((await listKeys(live.principal)).find((k) => k.id === created.id)?.disabledAt).toBe(revoked.disabledAt);
    // The revoking key itself is untouched.
    expect((await identity().authenticate(live.key.secret)).ok).toBe(true);
  });

  it('keeps the first disabledAt when a key is revoked twice', async () => {
    const live = await issued(newAccount(), 'live');
    const test = await issued(live.principal.account, 'test');
    const first = ok(await run<{ revokeApiKey: ApiKeyView }>(subgraph, live.principal, REVOKE, { id: test.key.id })).revokeApiKey;
    const second = ok(await run<{ revokeApiKey: ApiKeyView }>(subgraph, live.principal, REVOKE, { id: test.key.id })).revokeApiKey;
    expect(second.disabledAt).toBe(first.disabledAt);
  });
});

describe('other key kinds', () => {
  it.each(['traceroute', 'text', 'image'] as const)('refuses a %s key with FORBIDDEN before any key work', async (kind) => {
    const { principal } = await issued(newAccount(), kind);
    expect(firstError(await run(subgraph, principal, CREATE, { kind: 'LIVE' })).extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
    expect((await identity().listKeys({ account: principal.account })).map((k) => k.kind)).toEqual([kind]);
  });
});
