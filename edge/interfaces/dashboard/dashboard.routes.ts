import express, { type NextFunction, type Request, type Response } from 'express';
import type { AccountUser } from '../../../identity/account-user.entity.js';
import { AccountUserError } from '../../../identity/account-user.error.js';
import type { DashboardSession } from '../../../identity/dashboard-session.entity.js';
import { RANGE_MINUTES, type UsageRange } from '../../../identity/usage.service.js';
import { csrfFailed, DashboardApiError, insufficientRole, notSignedIn, sendDashboardError } from '../../access/dashboard-api.error.js';
import type { DashboardService } from './dashboard.service.js';
import { originAllowed } from '../../access/session-auth.js';
import { clearSessionCookie, setSessionCookie } from '../../access/session-cookie.js';
import { TooManyAttemptsError } from './sign-in-limiter.js';
import { DEFAULT_JSON_MAX_DEPTH, nestsDeeperThan, tooDeepMessage } from '../../../core/json-depth.js';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../../../core/database-unavailable.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function invalidBody(message: string): DashboardApiError {
  return new DashboardApiError(400, 'invalid_body', message);
}

/** The named string fields of a JSON object body, or 400 invalid_body naming what is wrong. */
function strings<const K extends string>(body: unknown, ...names: K[]): Record<K, string> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalidBody('The body must be a JSON object');
  const record = body as Record<string, unknown>;
  for (const name of names) {
    if (typeof record[name] !== 'string' || !(record[name] as string).length) throw invalidBody(`${name} is required (a string)`);
  }
  return record as Record<K, string>;
}

interface Signed {
  session: DashboardSession;
  user: AccountUser;
}

/**
 * The dashboard's JSON API (docs/dashboard-api.md), mounted at `<DASHBOARD_PATH>/api`: sign-in and
 * sessions, users and invitations (owners), usage. State changes need the session's CSRF token
 * and, when the browser sends one, the platform's own Origin.
 */
export function dashboardApi(service: DashboardService, options: { dashboardPath: string; sessionMaxMs: number; jsonMaxDepth?: number }): express.Router {
  const router = express.Router();
  const maxDepth = options.jsonMaxDepth ?? DEFAULT_JSON_MAX_DEPTH;
  router.use(express.json({ limit: '64kb' }));
  // JSON_MAX_DEPTH, as on every interface: refused before a handler walks the body.
  router.use((req, _res, next) => {
    if (nestsDeeperThan(req.body, maxDepth)) throw invalidBody(tooDeepMessage(maxDepth));
    next();
  });
  // Every state change, signed in or not (sign-in itself included), comes from the platform's own pages.
  router.use((req, _res, next) => {
    if (!SAFE_METHODS.has(req.method) && !originAllowed(req.header('origin'), req.header('host'))) throw csrfFailed('the Origin is not this platform');
    next();
  });

  /** The request's live session, refused without one; state changes also need the CSRF token. */
  const signed = async (req: Request): Promise<Signed> => {
    const session = await service.sessions.session(req);
    if (!session) throw notSignedIn();
    const csrf = service.sessions.csrfError(session, req.method, req.header('x-csrf-token'), req.header('origin'), req.header('host'));
    if (csrf) throw csrf;
    return { session, user: session.user };
  };
  const owner = async (req: Request): Promise<Signed> => {
    const signedIn = await signed(req);
    if (signedIn.user.role !== 'owner') throw insufficientRole('owner');
    return signedIn;
  };

  router.post('/session', async (req, res) => {
    const { email, password } = strings(req.body, 'email', 'password');
    const { token, body } = await service.signIn(email, password, req.ip);
    setSessionCookie(req, res, token, options.sessionMaxMs);
    res.status(200).json(body);
  });

  router.get('/session', async (req, res) => {
    const { session, user } = await signed(req);
    res.json(await service.signedIn(user, session.csrfToken));
  });

  router.delete('/session', async (req, res) => {
    const token = service.sessions.token(req);
    const session = token ? await service.sessions.service().session(token) : null;
    if (session && token) {
      const csrf = service.sessions.csrfError(session, req.method, req.header('x-csrf-token'), req.header('origin'), req.header('host'));
      if (csrf) throw csrf;
      await service.sessions.service().endSession(token);
    }
    clearSessionCookie(req, res);
    res.status(204).end();
  });

  router.post('/session/revoke-all', async (req, res) => {
    const { user } = await signed(req);
    await service.sessions.service().endAllSessions(user.id);
    clearSessionCookie(req, res);
    res.status(204).end();
  });

  router.get('/users', async (req, res) => {
    const { user } = await owner(req);
    const users = service.sessions.service();
    res.json({ users: await users.users(user.account.id), invitations: await users.invitations(user.account.id) });
  });

  router.post('/invitations', async (req, res) => {
    const { user } = await owner(req);
    const { email, role } = strings(req.body, 'email', 'role');
    const { invitation, token } = await service.sessions.service().invite({ inviter: user, email, role });
    const { acceptedAt: _acceptedAt, ...shown } = invitation;
    res.status(201).json({ invitation: shown, token, url: `${options.dashboardPath}/#/invite/${token}` });
  });

  router.post('/invitations/accept', async (req, res) => {
    const { token, name, password } = strings(req.body, 'token', 'name', 'password');
    const users = service.sessions.service();
    const user = await users.acceptInvitation({ token, name, password });
    const started = await users.startSession(user);
    setSessionCookie(req, res, started.token, options.sessionMaxMs);
    res.status(201).json(await service.signedIn(user, started.session.csrfToken));
  });

  router.get('/usage', async (req, res) => {
    const { user } = await signed(req);
    const mode = req.query.mode ?? 'live';
    const range = req.query.range ?? 'hour';
    if (mode !== 'live' && mode !== 'test') throw new DashboardApiError(400, 'invalid_query', 'mode must be live or test');
    if (typeof range !== 'string' || !(range in RANGE_MINUTES)) throw new DashboardApiError(400, 'invalid_query', 'range must be hour or day');
    res.json(await service.usageReport(user.account.id, mode, range as UsageRange));
  });

  // The traceroute admin area: each key's use against its windows (platform admins only).
  router.get('/traceroute-keys/use', async (req, res) => {
    const { user } = await signed(req);
    if (!user.platformAdmin) throw insufficientRole('platform admin');
    res.json(await service.tracerouteKeyUse());
  });

  router.use((req, _res, next) => next(new DashboardApiError(404, 'not_found', `No dashboard API route ${req.method} ${req.path}`)));

  router.use((error: Error & { status?: number; type?: string }, req: Request, res: Response, _next: NextFunction) => {
    if (error instanceof TooManyAttemptsError) res.setHeader('Retry-After', String(error.retryAfter));
    if (error instanceof DashboardApiError) return sendDashboardError(res, error);
    if (error instanceof AccountUserError) return sendDashboardError(res, { status: error.status, code: error.reason, message: error.message });
    // Body-parser failures: bad JSON, too large.
    if (error.status === 413) return sendDashboardError(res, { status: 413, code: 'payload_too_large', message: 'The body is larger than 64 kB' });
    if (error.status && error.status >= 400 && error.status < 500) return sendDashboardError(res, { status: 400, code: 'invalid_body', message: error.message });
    if (isDatabaseUnavailable(error)) {
      req.log?.warn({ err: error }, 'the database is unavailable');
      res.setHeader('Retry-After', '2');
      return sendDashboardError(res, { status: 503, code: 'service_unavailable', message: DATABASE_UNAVAILABLE_MESSAGE });
    }
    req.log?.error({ err: error }, 'dashboard API request failed');
    sendDashboardError(res, { status: 500, code: 'internal_error', message: 'An internal error occurred' });
  });
  return router;
}
