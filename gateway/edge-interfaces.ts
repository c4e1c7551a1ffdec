import type { Request } from 'express';
import type { RateLimits } from './edge-settings.js';
import { DEFAULT_TRACEROUTE_LIMITS } from '../identity/identity.service.js';
import {
  membershipErrorFormat,
  openAIErrorFormat,
  STATUS_BY_CODE,
  tracerouteErrorFormat,
  type ApiError,
  type ErrorFormat,
} from '../rest-bridge/errors.js';
import type { KeyKind, Principal } from '../core/principal.js';
import type { EdgeInterface, KeyRefusal } from './edge-interface.js';
import type { LimitWindow } from './rate-limit/rate-limiter.js';

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
function windowsOf(
  limits: RateLimits,
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

const perMinuteBreach = (window: LimitWindow): ApiError => ({
  status: 429,
  code: 'rate_limit_exceeded',
  message: `Rate limit exceeded: ${window.limit} requests per minute for this ${countedFor(window)}`,
});

const MEMBERSHIP_REFUSALS: Record<KeyRefusal, ApiError> = {
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

const GRAPHQL_CODE_BY_STATUS: Record<number, string> = Object.fromEntries(
  Object.entries(STATUS_BY_CODE).map(([code, status]) => [status, code]),
);

/**
 * GraphQL clients get the edge's errors as a GraphQL response: code in extensions, spec name as
 * reason; a failure that is not the client's names the request id, as masked errors do.
 */
export const graphqlErrorFormat: ErrorFormat = (error, requestId) => ({
  errors: [
    {
      message: error.message,
      extensions: {
        code: GRAPHQL_CODE_BY_STATUS[error.status] ?? 'BAD_REQUEST',
        reason: error.code,
        ...(error.param ? { param: error.param } : {}),
        ...(error.status >= 500 ? { requestId } : {}),
      },
    },
  ],
});

/** A traceroute key sent to /graphql as its spec gives it: in X-API-Key, without a Bearer key. */
const tracerouteKeyOnGraphql = (req: Request) => !bearerCredential(req) && !!req.header('x-api-key')?.trim();

/**
 * /graphql: every key kind as Bearer (each subgraph decides what a kind may see), each kind's own
 * limits; a traceroute key also in X-API-Key, refused then in its spec's words (invalid_key, ...).
 */
export function graphqlInterface(limits: RateLimits): EdgeInterface {
  return {
    name: 'graphql',
    credential: (req) => bearerCredential(req) ?? (tracerouteKeyOnGraphql(req) ? tracerouteCredential(req) : undefined),
    kinds: (req) => (tracerouteKeyOnGraphql(req) ? ['traceroute'] : ['live', 'test', 'text', 'image', 'traceroute', 'admin']),
    refusal: (reason, req) => (tracerouteKeyOnGraphql(req) ? TRACEROUTE_REFUSALS[reason] : MEMBERSHIP_REFUSALS[reason]),
    windows: (principal, key, address) => windowsOf(limits, principal, key, address),
    exceeded: (window) =>
      window.name === 'hourly' || window.name === 'daily' ? TRACEROUTE_BREACH(window) : perMinuteBreach(window),
    format: graphqlErrorFormat,
  };
}

const TRACEROUTE_REFUSALS: Record<KeyRefusal, ApiError> = {
  missing: { status: 401, code: 'api_key_required', message: 'An API key is required: send it in the X-API-Key header or the api_key query parameter' },
  invalid_key: { status: 403, code: 'invalid_key', message: 'The API key was not found' },
  // A key of another interface is, for this API, a key it does not know.
  wrong_kind: { status: 403, code: 'invalid_key', message: 'The API key was not found' },
  key_disabled: { status: 403, code: 'key_disabled', message: 'The API key has been deactivated' },
  key_expired: { status: 403, code: 'key_expired', message: 'The API key is past its expiry date' },
};

const TRACEROUTE_BREACH = (window: LimitWindow): ApiError => ({
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

function openAIRefusal(reason: KeyRefusal, needed: KeyKind, req: Request): ApiError {
  switch (reason) {
    case 'missing':
      return { status: 401, code: 'missing_api_key', message: "You didn't provide an API key. Send it as 'Authorization: Bearer <API key>'." };
    case 'wrong_kind':
      return { status: 403, code: 'wrong_key_kind', message: `This endpoint (${req.method} ${req.path}) needs ${needed === 'image' ? 'an image' : 'a text'} key.` };
    default:
      return { status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided.' };
  }
}

/** Service T at /inference/text: text keys only. */
export function serviceTInterface(limits: RateLimits): EdgeInterface {
  return {
    name: 'service-t',
    credential: bearerCredential,
    kinds: () => ['text'],
    refusal: (reason, req) => openAIRefusal(reason, 'text', req),
    windows: (principal, key, address) => windowsOf(limits, principal, key, address),
    exceeded: (window) => ({ ...perMinuteBreach(window), code: 'rate_limit_exceeded' }),
    format: openAIErrorFormat,
  };
}

/** Service I's text and chat endpoints, which take a text key. */
const SERVICE_I_TEXT_PATHS = /^\/v1\/(chat\/completions|completions|tokenize|models)\/?$/;

/** Service I's image endpoints (the spec's and the WebUI's own), which take an image key: the subgraph's image route table. */
const SERVICE_I_IMAGE_PATHS =
  /^\/(v1\/(txt2img|img2img|upscale-img|img-samplers|upscalers|img-options|parallel-requests)|sdapi\/v1\/(sd-models|txt2img|img2img|extra-single-image|samplers|upscalers|options|progress))\/?$/;

/** Which key kind a Service I path needs, from its path below the mount; null for a path it does not have, which either kind may hear is 404. */
export function serviceIKind(pathBelowMount: string): KeyKind | null {
  if (SERVICE_I_TEXT_PATHS.test(pathBelowMount)) return 'text';
  return SERVICE_I_IMAGE_PATHS.test(pathBelowMount) ? 'image' : null;
}

/** Service I at /inference/image: image endpoints need an image key, text endpoints a text key, and a path it lacks is 404 for either. */
export function serviceIInterface(limits: RateLimits, base: string): EdgeInterface {
  const needed = (req: Request) => serviceIKind(req.path.slice(base.length) || '/');
  return {
    name: 'service-i',
    credential: bearerCredential,
    kinds: (req) => {
      const kind = needed(req);
      return kind ? [kind] : ['text', 'image'];
    },
    refusal: (reason, req) => openAIRefusal(reason, needed(req) ?? 'image', req),
    windows: (principal, key, address) => windowsOf(limits, principal, key, address),
    exceeded: perMinuteBreach,
    format: openAIErrorFormat,
  };
}

/**
 * The keyless inference interfaces (the proxy and the gateway): no key, and every request counted
 * per client address in the window of requests without a valid key (the abuse limit the spec asks
 * of the proxy: its parallel limit is per address too, in the inference subgraph).
 */
export function keylessInferenceInterface(limits: RateLimits, name: 'inference-proxy' | 'inference-gateway'): EdgeInterface {
  return {
    name,
    keyless: true,
    credential: () => undefined,
    kinds: () => [],
    refusal: (reason, req) => openAIRefusal(reason, 'text', req),
    windows: (_principal, _key, address) => windowsOf(limits, undefined, undefined, address),
    exceeded: perMinuteBreach,
    format: openAIErrorFormat,
  };
}
