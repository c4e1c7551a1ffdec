import type { MikroORM } from '@mikro-orm/postgresql';
import type { NextFunction, Request, Response } from 'express';
import type { ApiKey } from '../../identity/api-key.entity.js';
import { authenticateKey } from '../../identity/identity.service.js';
import type { KeyUseRecorder } from '../../identity/key-use-recorder.js';
import type { KeyCache } from '../../identity/key-cache.js';
import { sendApiError } from '../rest/api-error.js';
import type { Principal } from '../../core/principal.js';
import type { EdgeInterface, KeyRefusal } from './edge-interface.js';
import type { RateLimiter, WindowState } from './rate-limiter.js';
import type { DashboardApiError } from './dashboard-api.error.js';
import { rateLimitRefusals } from '../../core/metrics/platform-metrics.js';
import type { SessionAuthenticator } from './session-auth.js';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/** The window a client should watch: the one with the fewest requests left, the shorter on a tie. */
function tightest(states: WindowState[]): WindowState | undefined {
  return [...states].sort((a, b) => a.remaining - b.remaining || a.window.seconds - b.window.seconds)[0];
}

/** The breach to report: the one that lasts longest, since it is the one the client must wait out. */
function worstBreach(states: WindowState[]): WindowState | undefined {
  return states.filter((s) => s.exceeded).sort((a, b) => b.retryAfter - a.retryAfter)[0];
}

/**
 * The edge's one pass over a request: authenticate the key as the interface's specification
 * says, count the request once in its windows (by account and mode for membership keys, by key
 * for others, by client address when there is no valid key, so guessing keys is limited too), answer with X-RateLimit-* headers, and refuse
 * with the interface's own status, error name and body. Accepted requests get `req.principal`.
 * GET on `publicPaths` (the OpenAPI documents) needs no key: it is counted by client address.
 * With `sessions` (/graphql only), a request without an Authorization header but with the
 * dashboard's session cookie acts as the session's user (session-auth.ts); a bad session is
 * refused like a bad key, and counted by address.
 */
export function edgeGuard(
  identityOrm: MikroORM,
  limiter: RateLimiter,
  edge: EdgeInterface,
  publicPaths: readonly string[] = [],
  keyCache?: KeyCache,
  sessions?: SessionAuthenticator,
  keyUse?: KeyUseRecorder,
) {
  const open = new Set(publicPaths);
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    try {
      let refusal: KeyRefusal | undefined;
      let principal: Principal | undefined;
      let key: ApiKey | undefined;
      let sessionRefusal: DashboardApiError | undefined;
      const isPublic = (req.method === 'GET' || req.method === 'HEAD') && open.has(req.path.replace(/(.)\/+$/, '$1'));
      const secret = edge.credential(req);
      if (isPublic || edge.keyless) {
        // A key sent anyway is not read: the request stays anonymous, counted by address.
      } else if (!secret) {
        const viaSession = sessions && req.headers.authorization === undefined ? await sessions.authenticateRequest(req) : undefined;
        if (!viaSession) refusal = 'missing';
        else if (viaSession.ok) principal = viaSession.principal;
        else sessionRefusal = viaSession.error;
      } else {
        const result = await authenticateKey(secret, { keyCache, em: () => identityOrm.em.fork() });
        if (!result.ok) refusal = result.reason;
        else if (!edge.kinds(req).includes(result.principal.kind)) refusal = 'wrong_kind';
        else {
          ({ principal, key } = result);
          keyUse?.record(result.key.id);
        }
      }

      const windows = edge.windows(principal, key, req.ip);
      const states = windows.length ? await limiter.hit(windows) : [];
      const shown = tightest(states);
      if (shown) {
        res.setHeader('X-RateLimit-Limit', String(shown.window.limit));
        res.setHeader('X-RateLimit-Remaining', String(shown.remaining));
        res.setHeader('X-RateLimit-Reset', String(shown.resetAt));
      }
      const breach = worstBreach(states);
      const requestId = String(req.id);
      // Known before a breach is answered, so that the dashboard's usage counts the account's 429s.
      req.principal = principal;
      if (breach) {
        res.setHeader('Retry-After', String(breach.retryAfter));
        rateLimitRefusals.inc({ interface: edge.name });
        sendApiError(res, edge.format, edge.exceeded(breach.window), requestId);
        return;
      }
      if (refusal) {
        sendApiError(res, edge.format, edge.refusal(refusal, req), requestId);
        return;
      }
      if (sessionRefusal) {
        sendApiError(res, edge.format, sessionRefusal.toApiError(), requestId);
        return;
      }
      // A traceroute key's quota is for answers: a request refused as bad input (400) is given back.
      if (principal?.kind === 'traceroute' && states.length) {
        res.once('finish', () => {
          if (res.statusCode === 400) limiter.refund(windows).catch((error: unknown) => req.log?.warn({ err: error }, 'a refused request was not given back to its quota'));
        });
      }
      next();
    } catch (error) {
      next(error);
    }
  };
}
