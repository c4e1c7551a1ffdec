import { DomainError } from '../../core/errors.js';

/** A resource the principal may not see is reported exactly like one that does not exist. */
export class NotFoundError extends DomainError {
  constructor(resource: string, id: string) {
    super('NOT_FOUND', `No ${resource} with id "${id}"`, { param: 'id', reason: `${resource}_not_found` });
  }
}
