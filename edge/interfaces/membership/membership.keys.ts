import type { RateLimits } from '../../edge-settings.js';
import type { ApiError } from '../../rest/api-error.js';
import type { EdgeInterface, KeyRefusal } from '../../access/edge-interface.js';
import { bearerCredential, perMinuteBreach, windowsOf } from '../../access/key-windows.js';
import { membershipErrorFormat } from './membership.error-body.js';

/** How a refused live or test key is answered (also on /graphql, where these keys are used too). */
export const MEMBERSHIP_REFUSALS: Record<KeyRefusal, ApiError> = {
  missing: { status: 401, code: 'missing_api_key', message: 'Authentication required: send "Authorization: Bearer <API key>"' },
  invalid_key: { status: 401, code: 'invalid_api_key', message: 'The API key is not valid' },
  key_disabled: { status: 401, code: 'api_key_disabled', message: 'The API key has been disabled' },
  key_expired: { status: 401, code: 'api_key_expired', message: 'The API key has expired' },
  wrong_kind: { status: 403, code: 'wrong_key_kind', message: 'This key cannot be used here; use a live or test key' },
};

/** The membership platform at /api/v1: live and test keys, per-minute limits, Stripe-like errors. */
export function membershipInterface(limits: RateLimits): EdgeInterface {
  return {
    name: 'membership',
    credential: bearerCredential,
    kinds: () => ['live', 'test'],
    refusal: (reason) => MEMBERSHIP_REFUSALS[reason],
    windows: (principal, key, address) => windowsOf(limits, principal, key, address),
    exceeded: perMinuteBreach,
    format: membershipErrorFormat,
  };
}
