import type { Request } from 'express';
import type { RateLimits } from '../edge-settings.js';
import { DEFAULT_TRACEROUTE_LIMITS } from '../../identity/identity.service.js';
import type { ApiError } from '../rest/api-error.js';
import type { Principal } from '../../core/principal.js';
import type { LimitWindow } from './rate-limiter.js';

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86400;

/** The key of a `Bearer <key>` authorization value. */
export function parseBearer(value: unknown): string | undefined {
  return typeof value === 'string' ? value.match(/^Bearer\s+(\S+)\s*$/i)?.[1] : undefined;
}

/** `Authorization: Bearer <key>`. */
export function bearerCredential(req: Request): string | undefined {
  return parseBearer(req.header('authorization'));
}

/** The traceroute API's key: the X-API-Key header, or the api_key query parameter. */
export function tracerouteCredential(req: Request): string | undefined {
  const header = req.header('x-api-key')?.trim();
  if (header) return header;
  const query = req.query.api_key;
  return typeof query === 'string' && query.trim() ? query.trim() : undefined;
}

/** A traceroute key's hourly and daily windows: what its requests count in, and what the admin area reads back. */
export function tracerouteWindows(keyId: string, key: { hourlyLimit?: number | null; dailyLimit?: number | null } | undefined): LimitWindow[] {
  return [
    { name: 'hourly', seconds: HOUR, limit: key?.hourlyLimit ?? DEFAULT_TRACEROUTE_LIMITS.hourly, subject: `key:${keyId}` },
    { name: 'daily', seconds: DAY, limit: key?.dailyLimit ?? DEFAULT_TRACEROUTE_LIMITS.daily, subject: `key:${keyId}` },
  ];
}

/**
 * Windows of a request, by key kind, each with the subject it counts. Membership keys (live,
 * test) share one per-minute window per account and mode (as Stripe counts), so more keys do not
 * mean more requests; traceroute keys count by hour and day with their own limits, whichever
 * interface (REST or /graphql) they come through; other kinds per key and minute; requests
 * without a valid key per client address.
 */
export function windowsOf(  limits: RateLimits,
  principal: Principal | undefined,
  key: { hourlyLimit?: number | null; dailyLimit?: number | null } | undefined,
  address: string | undefined,
): LimitWindow[] {
  // Node leaves the remote address unset once the socket is gone; such requests share one
  // visible bucket rather than one spelled `ip:undefined` by accident.
  if (!principal) return [{ name: 'anonymous', seconds: MINUTE, limit: limits.anonymousPerMinute, subject: `ip:${address || 'unknown'}` }];
  const perKey = `key:${principal.keyId}`;
  switch (principal.kind) {
    case 'live':
    case 'test':
      return [
        {
          name: 'minute',
          seconds: MINUTE,
          limit: principal.kind === 'live' ? limits.livePerMinute : limits.testPerMinute,
          subject: `account:${principal.accountId}:${principal.mode}`,
        },
      ];
    case 'traceroute':
      return tracerouteWindows(principal.keyId, key);
    case 'text':
    case 'image':
      return [{ name: 'minute', seconds: MINUTE, limit: limits.inferencePerMinute, subject: perKey }];
    case 'admin':
      return [{ name: 'minute', seconds: MINUTE, limit: limits.livePerMinute, subject: perKey }];
  }
}

/** Whose count a window is, in the words of the 429 it gives. */
function countedFor(window: LimitWindow): string {
  if (window.name === 'anonymous') return 'client without a valid key';
  if (window.subject.startsWith('account:')) return `account (${window.subject.endsWith(':test') ? 'test' : 'live'} mode, all its keys together)`;
  return 'key';
}


/** A per-minute window's 429, saying whose count it is. */
export const perMinuteBreach = (window: LimitWindow): ApiError => ({
  status: 429,
  code: 'rate_limit_exceeded',
  message: `Rate limit exceeded: ${window.limit} requests per minute for this ${countedFor(window)}`,
});
