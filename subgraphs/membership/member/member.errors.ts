import { DomainError } from '../../shared/errors.js';

export class MemberEmailTakenError extends DomainError {
  constructor(email: string) {
    super('CONFLICT', `A member with email "${email}" already exists`, { param: 'email', reason: 'member_email_taken' });
  }
}
