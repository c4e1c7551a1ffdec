import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyKind } from './principal.js';

// The edge owns the key store (schema `identity`). The subgraphs that manage keys (membership's
// Settings, API keys; traceroute's admin area) reach it only through this contract: in process when
// they run beside the edge, over the edge's internal endpoint when they run apart.

/** An API key as the key store shows it: never its secret. */
export interface KeyView {
  id: string;
  kind: KeyKind;
  account: string;
  name: string | null;
  prefix: string;
  livemode: boolean;
  createdAt: string;
  disabledAt: string | null;
  expiresAt: string | null;
  /** When the key last authenticated a request, to the minute; null when never. */
  lastUsedAt: string | null;
  /** Requests per hour and per day (traceroute keys); null for kinds limited per minute. */
  hourlyLimit: number | null;
  dailyLimit: number | null;
  /** A text or image key's inference plan; null when it is on the configuration's default plan, and for other kinds. */
  plan: string | null;
}

/** A key just issued: its secret is in this answer and nowhere else, ever. */
export type CreatedKey = KeyView & { secret: string };

export interface KeyFilter {
  account?: string;
  kind?: KeyKind;
}

export interface NewKey {
  account: string;
  /** One of KEY_KINDS; checked by the key store, so a caller's unchecked string is refused there. */
  kind: string;
  name?: string | null;
  expiresAt?: Date | null;
  hourlyLimit?: number | null;
  dailyLimit?: number | null;
}

/**
 * What a subgraph may do with keys. Failures are DomainErrors (NOT_FOUND, BAD_USER_INPUT, CONFLICT
 * with reason `key_limit_reached`), the same whichever side of the network the store is on.
 */
export interface KeyStore {
  listKeys(filter?: KeyFilter): Promise<KeyView[]>;
  createKey(input: NewKey): Promise<CreatedKey>;
  /** With `account`, only that account's keys can be disabled. */
  disableKey(id: string, account?: string): Promise<KeyView>;
  enableKey(id: string): Promise<KeyView>;
  expireKey(id: string, at: Date): Promise<KeyView>;
}

export const KEY_STORE_OPERATIONS = ['listKeys', 'createKey', 'disableKey', 'enableKey', 'expireKey'] as const;
export type KeyStoreOperation = (typeof KEY_STORE_OPERATIONS)[number];

/** Where the edge serves the key store to subgraphs: `POST <path>/<operation>`, JSON in and out. */
export const KEY_STORE_PATH = '/internal/key-store';

export const TIMESTAMP_HEADER = 'x-platform-timestamp';
export const SIGNATURE_HEADER = 'x-platform-signature';
/** A random value per call, signed with it: the edge accepts each once (identity/internal-nonces.ts). */
export const NONCE_HEADER = 'x-platform-nonce';

/**
 * Signatures older (or further ahead) than this are refused, so a captured request cannot be
 * replayed later; within it, the nonce makes each signed call good for one use.
 */
export const MAX_SIGNATURE_AGE_SECONDS = 300;

/** 16 random bytes in base64url (22 characters); a little room either side for other senders. */
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;

function mac(secret: string, timestamp: string, nonce: string, method: string, path: string, body: string | Buffer): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}\n${nonce}\n${method.toUpperCase()}\n${path}\n`).update(body).digest();
}

/** The headers that let the edge tell an internal caller (who holds INTERNAL_SECRET) from anyone else. */
export function signInternalRequest(secret: string, method: string, path: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  const nonce = randomBytes(16).toString('base64url');
  return { [TIMESTAMP_HEADER]: timestamp, [NONCE_HEADER]: nonce, [SIGNATURE_HEADER]: mac(secret, timestamp, nonce, method, path, body).toString('base64url') };
}

export type InternalSignatureRefusal = 'missing' | 'stale' | 'invalid';

/**
 * Why a signed internal request is refused, or undefined when its signature holds. A signature
 * that holds says who sent the call, not that it is the first time: the caller still claims
 * its nonce (identity/internal-nonces.ts) before acting on it.
 */
export function internalSignatureRefusal(
  secret: string,
  headers: { timestamp?: string; nonce?: string; signature?: string },
  method: string,
  path: string,
  body: Buffer,
  now = Date.now(),
): InternalSignatureRefusal | undefined {
  const { timestamp, nonce, signature } = headers;
  if (!timestamp || !nonce || !signature) return 'missing';
  if (!/^\d{1,12}$/.test(timestamp) || !NONCE.test(nonce)) return 'invalid';
  const age = Math.floor(now / 1000) - Number(timestamp);
  if (age > MAX_SIGNATURE_AGE_SECONDS || age < -MAX_SIGNATURE_AGE_SECONDS) return 'stale';
  const expected = mac(secret, timestamp, nonce, method, path, body);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return undefined;
}
