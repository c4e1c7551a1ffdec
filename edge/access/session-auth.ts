import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import { AccountUserService, type SessionSettings } from '../../identity/account-user.service.js';
import type { DashboardSession } from '../../identity/dashboard-session.entity.js';
import type { KeyKind, Principal } from '../../core/principal.js';
import { csrfFailed, DashboardApiError, insufficientRole, notSignedIn } from './dashboard-api.error.js';
import { readCookie, SESSION_COOKIE } from './session-cookie.js';

/** The kinds a session may act as on /graphql (x-dashboard-kind, or connectionParams.kind). */
const SESSION_KINDS: readonly KeyKind[] = ['live', 'test', 'admin'];

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A session principal's keyId: `usr_` and the user's id without dashes (36 characters, within
 * every column that stores a key id). Key ids start with `key_`, so the two never collide; rate
 * windows of live and test count per account and mode whichever it is.
 */
export function sessionKeyId(userId: string): string {
  return `usr_${userId.replace(/-/g, '')}`;
}

export type SessionAuthentication = { ok: true; principal: Principal; session: DashboardSession } | { ok: false; error: DashboardApiError };

function sameToken(given: string | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether an Origin header, when sent, names the host the request was made to. */
export function originAllowed(origin: string | undefined, host: string | undefined): boolean {
  if (!origin) return true;
  if (!host) return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/**
 * Sessions as identity for the edge: reads the dash_session cookie, checks the session, the CSRF
 * token of state changes and the Origin, and gives the principal the session's user acts as.
 */
export class SessionAuthenticator {
  constructor(
    private readonly orm: MikroORM,
    readonly settings: SessionSettings,
  ) {}

  service(): AccountUserService {
    return new AccountUserService(this.orm.em.fork(), this.settings);
  }

  /** The cookie's token, if the request carries one. */
  token(req: IncomingMessage): string | undefined {
    return readCookie(req, SESSION_COOKIE) || undefined;
  }

  /** The live session of the request's cookie, or null. */
  async session(req: IncomingMessage): Promise<DashboardSession | null> {
    const token = this.token(req);
    return token ? this.service().session(token) : null;
  }

  /** A state change made with a session must carry the session's CSRF token and, when sent, the platform's own Origin. */
  csrfError(session: DashboardSession, method: string, csrfToken: string | undefined, origin: string | undefined, host: string | undefined): DashboardApiError | undefined {
    if (SAFE_METHODS.has(method)) return undefined;
    if (!originAllowed(origin, host)) return csrfFailed('the Origin is not this platform');
    if (!sameToken(csrfToken, session.csrfToken)) return csrfFailed('send the session\'s x-csrf-token');
    return undefined;
  }

  /** The principal a session acts as, in the kind asked (live by default; admin for platform admins only). */
  principal(session: DashboardSession, requested: unknown): Principal | DashboardApiError {
    const kind = (requested === undefined || requested === '' ? 'live' : requested) as KeyKind;
    if (!SESSION_KINDS.includes(kind)) return new DashboardApiError(400, 'invalid_kind', `x-dashboard-kind must be one of ${SESSION_KINDS.join(', ')}`);
    const user = session.user;
    if (kind === 'admin' && !user.platformAdmin) return insufficientRole('platform admin');
    return {
      accountId: user.account.id,
      account: user.account.slug,
      keyId: sessionKeyId(user.id),
      kind,
      mode: kind === 'test' ? 'test' : 'live',
      user: { id: user.id, role: user.role },
    };
  }

  /**
   * /graphql over HTTP: undefined when the request has no session cookie (it is then a key
   * request, or none), else the session's principal or why it is refused.
   */
  async authenticateRequest(req: IncomingMessage & { method?: string }): Promise<SessionAuthentication | undefined> {
    const token = this.token(req);
    if (!token) return undefined;
    const session = await this.service().session(token);
    if (!session) return { ok: false, error: notSignedIn() };
    const csrf = this.csrfError(session, req.method ?? 'GET', header(req, 'x-csrf-token'), header(req, 'origin'), header(req, 'host'));
    if (csrf) return { ok: false, error: csrf };
    const principal = this.principal(session, header(req, 'x-dashboard-kind'));
    if (principal instanceof DashboardApiError) return { ok: false, error: principal };
    return { ok: true, principal, session };
  }

  /**
   * A websocket's upgrade: the cookie, connectionParams.csrfToken (a page of another site can
   * open a socket with the cookie, but cannot read the token) and the Origin, which browsers
   * always send on websockets.
   */
  async authenticateSocket(request: IncomingMessage, params: Readonly<Record<string, unknown>> | undefined): Promise<SessionAuthentication | undefined> {
    const token = this.token(request);
    if (!token) return undefined;
    const session = await this.service().session(token);
    if (!session) return { ok: false, error: notSignedIn() };
    const csrf = this.csrfError(session, 'POST', typeof params?.csrfToken === 'string' ? params.csrfToken : undefined, header(request, 'origin'), header(request, 'host'));
    if (csrf) return { ok: false, error: csrf };
    const principal = this.principal(session, params?.kind);
    if (principal instanceof DashboardApiError) return { ok: false, error: principal };
    return { ok: true, principal, session };
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
