/** The dashboard API (docs/dashboard-api.md) as the browser calls it: same origin, cookie session, CSRF header. */

export type Role = 'owner' | 'developer' | 'viewer';
export type Mode = 'live' | 'test';

export interface User {
  id: string;
  email: string;
  name: string;
  role: Role;
  platformAdmin: boolean;
}

export interface Account {
  id: string;
  name: string;
  keyCap: { max: number; active: number; kinds: string[] };
  limits: { livePerMinute: number; testPerMinute: number };
}

export interface SessionInfo {
  user: User;
  account: Account;
  csrfToken: string;
}

export interface Invitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: string;
  acceptedAt?: string | null;
}

export interface UsageMinute {
  minute: string;
  requests: number;
  rateLimited: number;
  clientErrors: number;
  serverErrors: number;
}

export interface Usage {
  mode: Mode;
  range: 'hour' | 'day';
  limitPerMinute: number;
  series: UsageMinute[];
  byStatus: { status: number; count: number }[];
  slowestPaths: { method: string; path: string; count: number; avgMs: number; maxMs: number }[];
}

/** A traceroute key's requests in its current hourly and daily windows. */
export interface TracerouteKeyUse {
  id: string;
  hourly: { used: number; limit: number; resetAt: string };
  daily: { used: number; limit: number; resetAt: string };
}

export interface Settings {
  graphqlPath: string;
  restBases: Record<string, string>;
  openApi: { title: string; url: string }[];
}

/** A refusal of the API, with its code, status and (for 429) the seconds to wait. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

// The API lives beside the app's own folder: /dashboard/ -> /dashboard/api.
const apiBase = new URL('api/', document.baseURI);

let csrfToken = '';
const sessionListeners = new Set<() => void>();

/** Runs `listener` whenever the signed-in session changes (the GraphQL clients drop their state). */
export function onSessionChange(listener: () => void): void {
  sessionListeners.add(listener);
}

export function sessionChanged(): void {
  for (const listener of sessionListeners) listener();
}

const expiryListeners = new Set<() => void>();

/** Runs `listener` when the platform answers 401 to a signed-in request: the session ended (idle, signed out elsewhere). */
export function onSessionExpired(listener: () => void): () => void {
  expiryListeners.add(listener);
  return () => expiryListeners.delete(listener);
}

export function sessionExpired(): void {
  csrfToken = '';
  for (const listener of expiryListeners) listener();
}

/** The token every state change sends; refreshed by each session answer. */
export function currentCsrfToken(): string {
  return csrfToken;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(new URL(path, apiBase), {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The platform cannot be reached. Check your connection and try again.');
  }
  if (response.status === 204) return undefined as T;
  const payload = (await response.json().catch(() => undefined)) as { error?: { code: string; message: string } } | undefined;
  // A 401 on anything but signing in means the session is gone: back to the sign-in page.
  if (response.status === 401 && !(method === 'POST' && path === 'session') && path !== 'invitations/accept' && csrfToken) sessionExpired();
  if (!response.ok) {
    const retry = Number(response.headers.get('retry-after'));
    throw new ApiError(
      response.status,
      payload?.error?.code ?? 'http_error',
      payload?.error?.message ?? `The platform answered ${response.status}`,
      Number.isFinite(retry) && retry > 0 ? retry : undefined,
    );
  }
  const answer = payload as T;
  const token = (answer as { csrfToken?: unknown } | undefined)?.csrfToken;
  if (typeof token === 'string') csrfToken = token;
  return answer;
}

export const api = {
  session: () => call<SessionInfo>('GET', 'session'),
  signIn: (email: string, password: string) => call<SessionInfo>('POST', 'session', { email, password }),
  signOut: async () => {
    await call<void>('DELETE', 'session');
    csrfToken = '';
  },
  signOutEverywhere: async () => {
    await call<void>('POST', 'session/revoke-all');
    csrfToken = '';
  },
  users: () => call<{ users: User[]; invitations: Invitation[] }>('GET', 'users'),
  invite: (email: string, role: Role) => call<{ invitation: Invitation; token: string; url: string }>('POST', 'invitations', { email, role }),
  acceptInvitation: (token: string, name: string, password: string) =>
    call<SessionInfo>('POST', 'invitations/accept', { token, name, password }),
  usage: (mode: Mode, range: 'hour' | 'day') => call<Usage>('GET', `usage?mode=${mode}&range=${range}`),
  tracerouteKeyUse: () => call<{ keys: TracerouteKeyUse[] }>('GET', 'traceroute-keys/use'),
};

/** The edge's settings for the app: REST bases and the OpenAPI documents it publishes. */
export async function loadSettings(): Promise<Settings> {
  const response = await fetch(new URL('config.json', document.baseURI), { credentials: 'same-origin' });
  if (!response.ok) throw new ApiError(response.status, 'settings_unavailable', 'The dashboard settings could not be loaded');
  return (await response.json()) as Settings;
}

/** "Try again in 2 minutes" from a 429's Retry-After. */
export function describeWait(seconds: number | undefined): string {
  if (!seconds) return 'Try again later.';
  if (seconds < 90) return `Try again in ${seconds} second${seconds === 1 ? '' : 's'}.`;
  const minutes = Math.ceil(seconds / 60);
  return `Try again in ${minutes} minutes.`;
}
