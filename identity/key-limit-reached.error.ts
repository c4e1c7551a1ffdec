import { DomainError } from '../core/errors.js';

/**
 * The account holds as many active membership keys as it may: 409 `key_limit_reached` over
 * REST, since it conflicts with the account's state and revoking a key resolves it.
 */
export class KeyLimitReachedError extends DomainError {
  constructor(limit: number) {
    super(
      'CONFLICT',
      `This account already has ${limit} active live and test keys, the most it may hold; revoke one before creating another`,
      { reason: 'key_limit_reached' },
    );
  }
}
