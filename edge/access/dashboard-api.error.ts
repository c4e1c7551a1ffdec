import type { Response } from 'express';
import type { ApiError } from '../rest/api-error.js';

/** A refusal of the dashboard API, answered as `{"error": {code, message}}` with its status. */
export class DashboardApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  toApiError(): ApiError {
    return { status: this.status, code: this.code, message: this.message };
  }
}

export const notSignedIn = () => new DashboardApiError(401, 'not_signed_in', 'Sign in to the dashboard first');
export const csrfFailed = (why: string) => new DashboardApiError(403, 'csrf_failed', `Refused as a possible cross-site request: ${why}`);
export const insufficientRole = (needed: string) => new DashboardApiError(403, 'insufficient_role', `This needs the ${needed} role`);

export function sendDashboardError(res: Response, error: { status: number; code: string; message: string }): void {
  res.status(error.status).json({ error: { code: error.code, message: error.message } });
}
