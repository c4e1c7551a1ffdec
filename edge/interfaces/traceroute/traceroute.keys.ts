import type { RateLimits } from '../../edge-settings.js';
import type { ApiError } from '../../rest/api-error.js';
import type { EdgeInterface, KeyRefusal } from '../../access/edge-interface.js';
import type { LimitWindow } from '../../access/rate-limiter.js';
import { tracerouteCredential, windowsOf } from '../../access/key-windows.js';
import { tracerouteErrorFormat } from './traceroute.error-body.js';

/** How a refused traceroute key is answered (also on /graphql when it comes in X-API-Key). */
export const TRACEROUTE_REFUSALS: Record<KeyRefusal, ApiError> = {
  missing: { status: 401, code: 'api_key_required', message: 'An API key is required: send it in the X-API-Key header or the api_key query parameter' },
  invalid_key: { status: 403, code: 'invalid_key', message: 'The API key was not found' },
  // A key of another interface is, for this API, a key it does not know.
  wrong_kind: { status: 403, code: 'invalid_key', message: 'The API key was not found' },
  key_disabled: { status: 403, code: 'key_disabled', message: 'The API key has been deactivated' },
  key_expired: { status: 403, code: 'key_expired', message: 'The API key is past its expiry date' },
};

/** The hourly and daily limits' 429s, in the traceroute API's error names. */
export const TRACEROUTE_BREACH = (window: LimitWindow): ApiError => ({
  status: 429,
  code: window.name === 'daily' ? 'rate_limit_daily' : window.name === 'hourly' ? 'rate_limit_hourly' : 'rate_limit_exceeded',
  message:
    window.name === 'daily' || window.name === 'hourly'
      ? `The ${window.name} limit of ${window.limit} requests for this key is used up`
      : `Rate limit exceeded: ${window.limit} requests per minute for a client without a valid key`,
});

/** The traceroute public API at /v1/public: traceroute keys in X-API-Key or api_key, hourly and daily limits. */
export function tracerouteInterface(limits: RateLimits): EdgeInterface {
  return {
    name: 'traceroute',
    credential: tracerouteCredential,
    kinds: () => ['traceroute'],
    refusal: (reason) => TRACEROUTE_REFUSALS[reason],
    windows: (principal, key, address) => windowsOf(limits, principal, key, address),
    exceeded: TRACEROUTE_BREACH,
    format: tracerouteErrorFormat,
  };
}
