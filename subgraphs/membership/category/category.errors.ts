import { DomainError } from '../../../core/errors.js';

export class CategoryNameTakenError extends DomainError {
  constructor(name: string) {
    super('CONFLICT', `A category named "${name}" already exists`, { param: 'name', reason: 'category_name_taken' });
  }
}

export class InvalidCategoryError extends DomainError {
  constructor(param: string, message: string) {
    super('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
  }
}

export class CategoryInUseError extends DomainError {
  constructor(id: string) {
    super('CONFLICT', `The member category "${id}" has members or invoices; it cannot be deleted`, { param: 'id', reason: 'category_in_use' });
  }
}

/** A category argument that names no category of this account and mode. */
export class CategoryNotFoundError extends DomainError {
  constructor(id: string, param: string) {
    super('NOT_FOUND', `No member category with id "${id}"`, { param, reason: 'member_category_not_found' });
  }
}
