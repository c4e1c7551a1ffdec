import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';

export const SESSION_COOKIE = 'dash_session';

/** The value of one cookie of a request's Cookie header, if present. */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(value);
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/**
 * HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it), Path=/ (the
 * dashboard's API and /graphql), Secure when the request came over https.
 */
export function setSessionCookie(req: Request, res: Response, token: string, maxAgeMs: number): void {
  res.cookie(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'strict', path: '/', secure: req.secure, maxAge: maxAgeMs });
}

export function clearSessionCookie(req: Request, res: Response): void {
  res.clearCookie(SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', path: '/', secure: req.secure });
}
