import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from './errors.js';

/**
 * Key kinds: `live`/`test` for the membership platform, `text`/`image` for the inference
 * providers, `traceroute` for the public traceroute API, and `admin` for the platform's operators
 * (the traceroute admin area); admin keys are issued only by the command-line tool.
 */
export const KEY_KINDS = ['live', 'test', 'text', 'image', 'traceroute', 'admin'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];
export type Mode = 'live' | 'test';

/** The kinds issued on an inference plan; no other kind carries one. */
export const PLAN_KEY_KINDS: readonly KeyKind[] = ['text', 'image'];

/** Who a request acts for, established once at the edge and carried to the subgraphs. */
export interface Principal {
  accountId: string;
  account: string;
  keyId: string;
  kind: KeyKind;
  mode: Mode;
  /**
   * The inference plan of a text or image key issued on one; absent for a key on the default
   * plan and for every other kind. Read it through `planOf`, never as-is.
   */
  plan?: string;
  /**
   * The dashboard user a request acts for, when it came with a session cookie instead of a key
   * (its keyId is then the user's `usr_` id, never a key's). Viewers may look but not change keys.
   */
  user?: { id: string; role: 'owner' | 'developer' | 'viewer' };
}

/**
 * The plan an inference request is served on: the key's own, else the configuration's default.
 * Never undefined, so a keyed request cannot skip the plan check.
 */
export function planOf(principal: Pick<Principal, 'plan'>, defaultPlan: string): string {
  return principal.plan ?? defaultPlan;
}

/**
 * Every field of a principal in one string: a principal that changed (another plan, say) is
 * another id, so it is never sent an old header, an upstream connection or an event result made for the
 * old one.
 */
export function principalId(principal: Principal): string {
  return `${principal.keyId}\u0000${principal.accountId}\u0000${principal.account}\u0000${principal.kind}\u0000${principal.mode}\u0000${principal.plan ?? ''}\u0000${principal.user ? `${principal.user.id}:${principal.user.role}` : ''}`;
}

export const PRINCIPAL_HEADER = 'x-platform-principal';

/** Signatures older than this are refused, so a captured header is useless soon after. */
const MAX_AGE_SECONDS = 300;

function mac(secret: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest();
}

/** `<base64url(json principal + iat)>.<base64url(hmac-sha256)>`, sent on every subgraph request. */
export function signPrincipal(principal: Principal, secret: string, now = Date.now()): string {
  const payload = Buffer.from(JSON.stringify({ ...principal, iat: Math.floor(now / 1000) })).toString('base64url');
  return `${payload}.${mac(secret, payload).toString('base64url')}`;
}

export class UnauthenticatedError extends DomainError {
  constructor(message: string) {
    super('UNAUTHENTICATED', message);
  }
}

/** Verifies a signed principal header; throws UnauthenticatedError when missing, forged or stale. */
export function verifyPrincipal(header: string | undefined, secret: string, now = Date.now()): Principal {
  const { principal, iat } = verifiedPayload(header, secret);
  checkAge(iat, now, PRINCIPAL_WORDS);
  return { ...principal };
}

/** Headers whose signature checked out, by header and secret; past this many it starts over. */
const MAX_VERIFIED = 10_000;
const verified = new Map<string, { principal: Principal; iat: number }>();

/**
 * The header's principal and signing time once its signature checks out. The edge reuses one
 * header per principal for seconds (PrincipalSigner), so the same bytes arrive again and again:
 * their HMAC is computed once. The age is checked by the caller on every use, so a remembered
 * header expires exactly when an unremembered one would.
 */
function verifiedPayload(header: string | undefined, secret: string): { principal: Principal; iat: number } {
  if (!header) throw new UnauthenticatedError(EDGE_ONLY);
  const cacheKey = `${secret}\u0000${header}`;
  const known = verified.get(cacheKey);
  if (known) return known;
  const decoded = signedPayload(header, secret, PRINCIPAL_WORDS);
  // A keyless caller's header (signClient) is signed with the same secret: never a principal.
  if (decoded.keyless !== undefined) throw new UnauthenticatedError(PRINCIPAL_WORDS.malformed);
  const { iat, ...principal } = decoded as unknown as Principal & { iat: number };
  const entry = { principal: principal as Principal, iat };
  if (verified.size >= MAX_VERIFIED) verified.clear();
  verified.set(cacheKey, entry);
  return entry;
}

/** A request without the header: it did not come through the edge. */
const EDGE_ONLY = 'This service is reached only through the platform edge';

/** What a refused header is called in its errors. */
interface HeaderWords {
  malformed: string;
  invalid: string;
  expired: string;
}
const PRINCIPAL_WORDS: HeaderWords = { malformed: 'Malformed principal', invalid: 'Principal signature is invalid', expired: 'Principal signature has expired' };
const CLIENT_WORDS: HeaderWords = { malformed: 'Malformed client header', invalid: 'Client header signature is invalid', expired: 'Client header signature has expired' };

/** The JSON payload of `<base64url(json)>.<base64url(hmac)>` once its signature checks out (principals and keyless callers alike). */
function signedPayload(header: string, secret: string, words: HeaderWords): Record<string, unknown> {
  const [payload, signature, extra] = header.split('.');
  if (!payload || !signature || extra !== undefined) throw new UnauthenticatedError(words.malformed);
  const expected = mac(secret, payload);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new UnauthenticatedError(words.invalid);
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new UnauthenticatedError(words.malformed);
  }
}

/** Throws the header's "expired" error when it was signed more than MAX_AGE_SECONDS away from now. */
function checkAge(iat: unknown, now: number, words: HeaderWords): void {
  const age = Math.floor(now / 1000) - Number(iat);
  if (!Number.isFinite(age) || age > MAX_AGE_SECONDS || age < -MAX_AGE_SECONDS) throw new UnauthenticatedError(words.expired);
}

/** The header carrying a keyless caller (the inference proxy and gateway), signed by the edge like a principal. */
export const CLIENT_HEADER = 'x-platform-client';

/** A keyless request's caller: the client address the edge saw, signed so a subgraph can count by it. */
export function signClient(address: string, secret: string, now = Date.now()): string {
  const payload = Buffer.from(JSON.stringify({ keyless: true, address, iat: Math.floor(now / 1000) })).toString('base64url');
  return `${payload}.${mac(secret, payload).toString('base64url')}`;
}

/** The address of a signed keyless caller; throws UnauthenticatedError when missing, forged or stale. */
export function verifyClient(header: string | undefined, secret: string, now = Date.now()): string {
  if (!header) throw new UnauthenticatedError(EDGE_ONLY);
  const decoded = signedPayload(header, secret, CLIENT_WORDS);
  // A signed principal is never a keyless caller: the `keyless` mark keeps the two apart.
  if (decoded.keyless !== true || typeof decoded.address !== 'string') throw new UnauthenticatedError(CLIENT_WORDS.malformed);
  checkAge(decoded.iat, now, CLIENT_WORDS);
  return decoded.address;
}
