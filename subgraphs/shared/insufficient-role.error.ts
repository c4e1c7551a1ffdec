import { DomainError } from '../../core/errors.js';

/** A dashboard user whose role does not reach what an operation needs: FORBIDDEN, reason `insufficient_role`. */
export class InsufficientRoleError extends DomainError {
  constructor(message: string) {
    super('FORBIDDEN', message, { reason: 'insufficient_role' });
  }
}
