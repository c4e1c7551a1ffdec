import cors from 'cors';
import type { RequestHandler } from 'express';
import type { CrossOrigins } from '../edge-settings.js';

// What a page may read beside the CORS-safelisted headers: the request id, the rate limit's state,
// when to retry, a replayed idempotent answer, validators and download names.
const EXPOSED_HEADERS = ['x-request-id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed', 'ETag', 'Content-Disposition', 'Allow'];
// How long a browser may reuse a preflight's answer; Chrome caps it at 7200 s.
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * CORS for keyed calls from other origins. Credentials (the dashboard's session cookie) are never
 * allowed across origins: a page elsewhere sends its key, as OpenAI's and Hive Gateway's browser
 * clients do. A preflight (OPTIONS with Access-Control-Request-Method) is answered 204 here,
 * before any key is asked for; the request headers it names are allowed back. Paths in `except`
 * (the dashboard, the internal key store) get no CORS headers.
 */
export function crossOrigin(origins: CrossOrigins, except: (path: string) => boolean): RequestHandler {
  const base = {
    origin: origins,
    credentials: false,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
  };
  const preflight = cors(base);
  // An OPTIONS that is no preflight goes on to the interface (its Allow), with the CORS headers set.
  const plainOptions = cors({ ...base, preflightContinue: true });
  return (req, res, next) => {
    if (req.headers.origin === undefined || except(req.path)) return next();
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] === undefined) return plainOptions(req, res, next);
    return preflight(req, res, next);
  };
}
