import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../core/errors.js';
import type { KeyView, NewKey } from '../core/key-store.js';
import { KEY_KINDS, PLAN_KEY_KINDS, type KeyKind, type Mode, type Principal } from '../core/principal.js';
import { Account } from './account.entity.js';
import { ApiKey } from './api-key.entity.js';
import { evictKeyLocally, type KeyCache } from './key-cache.js';
import { KeyLimitReachedError } from './key-limit-reached.error.js';

const SECRET_PREFIX: Record<KeyKind, string> = {
  live: 'sk_live_',
  test: 'sk_test_',
  text: 'tk_',
  image: 'ik_',
  traceroute: 'trk_',
  admin: 'adm_',
};

/** The traceroute API's default per-key limits (its specification, part 8). */
export const DEFAULT_TRACEROUTE_LIMITS = { hourly: 100, daily: 2000 } as const;
const MAX_LIMIT = 10_000_000;

const ACCOUNT_SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** The inference configuration's id shape, so a stored plan fits its column whoever checks the name. */
const PLAN_ID = /^[a-z][a-z0-9_]{0,63}$/;

/** Active live and test keys an account may hold unless configured (MAX_ACTIVE_KEYS_PER_ACCOUNT). */
export const DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT = 20;

/** The membership platform's kinds: their limits count per account, and their number is capped. */
const MEMBERSHIP_KINDS: readonly KeyKind[] = ['live', 'test'];

export interface IdentitySettings {
  /** Live and test keys that are neither disabled nor expired, per account. */
  maxActiveKeysPerAccount?: number;
  /** The edge's cache of looked-up keys (authenticate reads it first). */
  keyCache?: KeyCache;
}

// The view's type belongs to the key store's contract (core/key-store.ts), which subgraphs see too.
export type { KeyView };

export interface PlanOptions {
  /**
   * The plan ids the inference configuration lists, when the caller has read it; a plan outside
   * them is refused. Identity does not read that configuration itself (it belongs to the
   * inference subgraph), so without this option only the name's shape is checked.
   */
  knownPlans?: readonly string[];
}

type KeyDates = Pick<ApiKey, 'disabledAt' | 'expiresAt'>;

export type KeyRefusalReason = 'invalid_key' | 'key_disabled' | 'key_expired';

export type AuthenticationResult =
  | { ok: true; principal: Principal; key: ApiKey }
  | { ok: false; reason: KeyRefusalReason };

/** Why `key` no longer authenticates at `now` (gone, disabled or revoked, expired), or undefined while it does. */
export function keyRefusal(key: Pick<ApiKey, 'disabledAt' | 'expiresAt'> | null | undefined, now = new Date()): KeyRefusalReason | undefined {
  if (!key) return 'invalid_key';
  if (key.disabledAt) return 'key_disabled';
  if (key.expiresAt && key.expiresAt <= now) return 'key_expired';
  return undefined;
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function modeOfKind(kind: KeyKind): Mode {
  return kind === 'test' ? 'test' : 'live';
}

function toView(key: ApiKey): KeyView {
  return {
    id: key.id,
    kind: key.kind,
    account: key.account.slug,
    name: key.name ?? null,
    prefix: key.prefix,
    livemode: modeOfKind(key.kind) === 'live',
    createdAt: key.createdAt.toISOString(),
    disabledAt: key.disabledAt?.toISOString() ?? null,
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    hourlyLimit: key.kind === 'traceroute' ? (key.hourlyLimit ?? DEFAULT_TRACEROUTE_LIMITS.hourly) : null,
    dailyLimit: key.kind === 'traceroute' ? (key.dailyLimit ?? DEFAULT_TRACEROUTE_LIMITS.daily) : null,
    plan: PLAN_KEY_KINDS.includes(key.kind) ? (key.plan ?? null) : null,
  };
}

function checkPlan(plan: string, { knownPlans }: PlanOptions): void {
  if (!PLAN_ID.test(plan)) {
    throw new DomainError('BAD_USER_INPUT', 'Plan names are 1-64 lowercase letters, digits or "_", starting with a letter', { param: 'plan' });
  }
  if (knownPlans && !knownPlans.includes(plan)) {
    throw new DomainError('BAD_USER_INPUT', `Unknown plan "${plan}": the plans are ${knownPlans.join(', ')}`, { param: 'plan' });
  }
}

function refusePlanOn(kind: KeyKind): void {
  if (!PLAN_KEY_KINDS.includes(kind)) {
    throw new DomainError('BAD_USER_INPUT', `Plans are set on text and image keys only, not on ${kind} keys`, { param: 'plan' });
  }
}

function checkLimit(value: number | null | undefined, param: string): void {
  if (value == null) return;
  if (!Number.isInteger(value) || value < 1 || value > MAX_LIMIT) {
    throw new DomainError('BAD_USER_INPUT', `${param} must be a whole number from 1 to ${MAX_LIMIT}`, { param });
  }
}

/** Accounts and API keys: issuing, listing, disabling, and authenticating a presented secret. */
export class IdentityService {
  private readonly maxActiveKeys: number;

  private readonly keyCache?: KeyCache;

  constructor(
    private readonly em: EntityManager,
    settings: IdentitySettings = {},
  ) {
    this.maxActiveKeys = settings.maxActiveKeysPerAccount ?? DEFAULT_MAX_ACTIVE_KEYS_PER_ACCOUNT;
    this.keyCache = settings.keyCache;
  }

  async ensureAccount(slug: string): Promise<Account> {
    if (!ACCOUNT_SLUG.test(slug)) {
      throw new DomainError('BAD_USER_INPUT', 'Account names are 1-64 lowercase letters, digits, "-" or "_"', {
        param: 'account',
      });
    }
    // Insert-or-nothing, so two concurrent first keys of one account do not collide.
    await this.em
      .createQueryBuilder(Account)
      .insert({ id: randomUUID(), slug, createdAt: new Date() })
      .onConflict('slug')
      .ignore()
      .execute();
    return this.em.findOneOrFail(Account, { slug });
  }

  /**
   * Issues a key; the returned secret is never stored and cannot be shown again. A text or image
   * key without `plan` is on the inference configuration's default plan.
   */
  async createKey(input: NewKey & { plan?: string | null } & PlanOptions, now = new Date()): Promise<KeyView & { secret: string }> {
    if (!(KEY_KINDS as readonly string[]).includes(input.kind)) {
      throw new DomainError('BAD_USER_INPUT', `Key kind must be one of ${KEY_KINDS.join(', ')}`, { param: 'kind' });
    }
    if (input.name && input.name.length > 120) {
      throw new DomainError('BAD_USER_INPUT', 'Key names are at most 120 characters', { param: 'name' });
    }
    const kind = input.kind as KeyKind;
    if ((input.hourlyLimit != null || input.dailyLimit != null) && kind !== 'traceroute') {
      throw new DomainError('BAD_USER_INPUT', 'Hourly and daily limits are set on traceroute keys only', { param: 'kind' });
    }
    if (input.plan != null) {
      refusePlanOn(kind);
      checkPlan(input.plan, input);
    }
    checkLimit(input.hourlyLimit, 'hourlyLimit');
    checkLimit(input.dailyLimit, 'dailyLimit');
    if (input.expiresAt && input.expiresAt <= now) {
      throw new DomainError('BAD_USER_INPUT', 'expiresAt must be in the future: the key would be born expired', { param: 'expiresAt' });
    }
    const { id: accountId } = await this.ensureAccount(input.account);
    const secret = SECRET_PREFIX[kind] + randomBytes(24).toString('base64url');
    const key = await this.em.transactional(async (em) => {
      const account = await this.lockAccount(em, accountId);
      if (MEMBERSHIP_KINDS.includes(kind)) await this.assertBelowCap(em, accountId, now);
      return em.create(ApiKey, {
        id: 'key_' + randomBytes(12).toString('base64url'),
        account,
        kind,
        name: input.name ?? null,
        prefix: secret.slice(0, SECRET_PREFIX[kind].length + 4),
        secretHash: hashSecret(secret),
        createdAt: new Date(),
        expiresAt: input.expiresAt ?? null,
        hourlyLimit: input.hourlyLimit ?? null,
        dailyLimit: input.dailyLimit ?? null,
        plan: input.plan ?? null,
      });
    });
    return { ...toView(key), secret };
  }

  /**
   * Locks the account's row: every change that can add an active key to the account holds it
   * while counting, so concurrent ones cannot pass the cap together.
   */
  private lockAccount(em: EntityManager, accountId: string): Promise<Account> {
    return em.findOneOrFail(Account, accountId, { lockMode: LockMode.PESSIMISTIC_WRITE });
  }

  /** Refuses one more active live or test key when the account holds the most it may; call with the account locked. */
  private async assertBelowCap(em: EntityManager, accountId: string, now: Date): Promise<void> {
    const active = await em.count(ApiKey, {
      account: accountId,
      kind: { $in: [...MEMBERSHIP_KINDS] },
      disabledAt: null,
      $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }],
    });
    if (active >= this.maxActiveKeys) throw new KeyLimitReachedError(this.maxActiveKeys);
  }

  async listKeys(filter: { account?: string; kind?: KeyKind } = {}): Promise<KeyView[]> {
    const keys = await this.em.find(
      ApiKey,
      {
        ...(filter.account ? { account: { slug: filter.account } } : {}),
        ...(filter.kind ? { kind: filter.kind } : {}),
      },
      { populate: ['account'], orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    return keys.map(toView);
  }

  /** Disables a key; with `account`, only that account's keys can be disabled. */
  disableKey(id: string, account?: string): Promise<KeyView> {
    return this.change(id, account, (key) => {
      key.disabledAt ??= new Date();
    });
  }

  /** Re-enables a disabled key (an expired one stays expired). */
  enableKey(id: string, account?: string): Promise<KeyView> {
    return this.change(id, account, (key) => {
      key.disabledAt = null;
    });
  }

  /** Sets the key's expiry; now by default, which ends the key at once. */
  expireKey(id: string, at: Date = new Date(), account?: string): Promise<KeyView> {
    return this.change(id, account, (key) => {
      key.expiresAt = at;
    });
  }

  /**
   * Moves a text or image key to another plan; null puts it back on the configuration's default.
   * The next request with the key is served on the new plan.
   */
  async setKeyPlan(id: string, plan: string | null, options: PlanOptions & { account?: string } = {}): Promise<KeyView> {
    const key = await this.em.findOne(ApiKey, options.account ? { id, account: { slug: options.account } } : { id }, { populate: ['account'] });
    if (!key) throw new DomainError('NOT_FOUND', `No API key with id "${id}"`, { param: 'id' });
    refusePlanOn(key.kind);
    if (plan !== null) checkPlan(plan, options);
    key.plan = plan;
    await this.em.flush();
    // Other instances hear of it from the api_key trigger; this one's caches forget it before we answer.
    evictKeyLocally(key.id);
    return toView(key);
  }

  /**
   * Applies `apply` to the key's disabled and expiry dates. A change that makes a disabled or
   * expired live or test key active again counts against the cap like a new key.
   */
  private async change(id: string, account: string | undefined, apply: (dates: KeyDates) => void, now = new Date()): Promise<KeyView> {
    const found = await this.em.findOne(ApiKey, account ? { id, account: { slug: account } } : { id });
    if (!found) throw new DomainError('NOT_FOUND', `No API key with id "${id}"`, { param: 'id' });
    const key = await this.em.transactional(async (em) => {
      await this.lockAccount(em, found.account.id);
      // Read again under the lock: a concurrent change of this key or a sibling has committed by now.
      const current = await em.refresh(found);
      if (!current) throw new DomainError('NOT_FOUND', `No API key with id "${id}"`, { param: 'id' });
      const dates: KeyDates = { disabledAt: current.disabledAt, expiresAt: current.expiresAt };
      apply(dates);
      if (MEMBERSHIP_KINDS.includes(current.kind) && keyRefusal(current, now) && !keyRefusal(dates, now)) {
        await this.assertBelowCap(em, current.account.id, now);
      }
      Object.assign(current, dates);
      return current;
    });
    evictKeyLocally(key.id);
    return toView(key);
  }

  /** The keys with these ids as stored now (a deleted key is absent): one read for many open sockets. */
  async keysById(ids: readonly string[]): Promise<Map<string, ApiKey>> {
    if (!ids.length) return new Map();
    const keys = await this.em.find(ApiKey, { id: { $in: [...new Set(ids)] } });
    return new Map(keys.map((key) => [key.id, key]));
  }

  /** Looks a presented secret up by its hash: from the key cache when it has it, else one indexed read. */
  async authenticate(secret: string, now = new Date()): Promise<AuthenticationResult> {
    return authenticateKey(secret, { keyCache: this.keyCache, em: () => this.em }, now);
  }
}

/**
 * The key a secret belongs to, if it authenticates at `now`, and its principal. The key cache is
 * read first; `em` is asked for only on a miss, so the edge forks no EntityManager for a key it
 * has seen (the edge guard, on every request).
 */
export async function authenticateKey(secret: string, from: { keyCache?: KeyCache; em: () => EntityManager }, now = new Date()): Promise<AuthenticationResult> {
  const hash = hashSecret(secret);
  let key = from.keyCache?.get(hash);
  if (!key) {
    key = (await from.em().findOne(ApiKey, { secretHash: hash }, { populate: ['account'] })) ?? undefined;
    if (key) from.keyCache?.set(hash, key);
  }
  if (!key) return { ok: false, reason: 'invalid_key' };
  const refusal = keyRefusal(key, now);
  if (refusal) return { ok: false, reason: refusal };
  return {
    ok: true,
    key,
    principal: {
      accountId: key.account.id,
      account: key.account.slug,
      keyId: key.id,
      kind: key.kind,
      mode: modeOfKind(key.kind),
      // Absent on the default plan: the inference subgraph, which holds the configuration, fills it in (planOf).
      ...(PLAN_KEY_KINDS.includes(key.kind) && key.plan ? { plan: key.plan } : {}),
    },
  };
}
