import type { Principal } from '../../../core/principal.js';

/**
 * Whose calls an analytics query reads: every call, one account's, or one client address's (a
 * keyless gateway caller's own calls, the only identity it has).
 */
export type AnalyticsScope = { kind: 'all' } | { kind: 'account'; accountId: string } | { kind: 'address'; address: string };

/** GraphQL callers: an admin key reads every call, a text or image key its own account's. */
export function scopeOfPrincipal(principal: Principal): AnalyticsScope {
  return principal.kind === 'admin' ? { kind: 'all' } : { kind: 'account', accountId: principal.accountId };
}
