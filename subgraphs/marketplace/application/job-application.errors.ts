import { DomainError } from '../../../core/errors.js';

/** The candidate already has an active application to this posting; its id is in the error. */
export class DuplicateApplicationError extends DomainError {
  constructor(existingId: string) {
    super('CONFLICT', `The candidate already has an active application to this posting (${existingId})`, { reason: 'application_exists' });
    this.extensions.existingId = existingId;
  }
}

/** Applications go only to open postings. */
export class PostingNotOpenError extends DomainError {
  constructor(status: string) {
    super('CONFLICT', `The posting is ${status} and takes no applications`, { reason: 'job_posting_not_open' });
  }
}

/** Only active applications move; rejected, hired and withdrawn ones are final. */
export class ApplicationNotActiveError extends DomainError {
  constructor(status: string) {
    super('CONFLICT', `The application is ${status}; only active applications change`, { reason: 'application_not_active' });
  }
}

/** A posting lifecycle change its current status does not allow. */
export class IllegalPostingTransitionError extends DomainError {
  constructor(action: string, status: string) {
    super('CONFLICT', `A ${status} posting cannot be ${action}`, { reason: 'illegal_job_posting_transition' });
  }
}

export class InvalidCandidateError extends DomainError {
  constructor(message: string, param: string) {
    super('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
  }
}
