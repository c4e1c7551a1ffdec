import { DomainError } from '../../../core/errors.js';

export class DocumentCategoryNameTakenError extends DomainError {
  constructor(name: string) {
    super('CONFLICT', `A document category named "${name}" already exists`, { param: 'name', reason: 'document_category_name_taken' });
  }
}

export class DocumentCategoryNotFoundError extends DomainError {
  constructor(id: string) {
    super('NOT_FOUND', `No document category with id "${id}"`, { param: 'id', reason: 'document_category_not_found' });
  }
}

/** A rule that cannot be stored: a blank or over-long pattern, a regular expression that does not compile or could backtrack without end. */
export class InvalidDocumentRuleError extends DomainError {
  constructor(param: string, problem: string) {
    super('BAD_USER_INPUT', `Invalid rule: ${problem}`, { param, reason: 'invalid_document_rule' });
  }
}

export class InvalidDocumentCategoryError extends DomainError {
  constructor(param: string, message: string) {
    super('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
  }
}
