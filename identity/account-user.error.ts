import { DomainError, type ErrorCode } from '../core/errors.js';

/**
 * A refusal of the dashboard's user, session or invitation operations: the GraphQL-style code for
 * any caller, plus the HTTP status and snake_case reason the dashboard API answers with (410 for
 * an expired invitation has no GraphQL code of its own).
 */
export class AccountUserError extends DomainError {
  constructor(
    code: ErrorCode,
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(code, message, { reason });
  }
}
