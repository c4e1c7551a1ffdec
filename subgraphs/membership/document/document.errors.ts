import { GraphQLError } from 'graphql';
import { DomainError } from '../../../core/errors.js';

/** A file over DOCUMENT_MAX_UPLOAD_BYTES: 413 over REST. */
export class DocumentTooLargeError extends DomainError {
  constructor(readonly maxBytes: number) {
    super('BAD_USER_INPUT', `The file is larger than the ${maxBytes} bytes allowed`, { param: 'file', reason: 'document_too_large' });
  }
}

/** Bytes whose sniffed type is off the allowlist, whatever the name or the claimed type: 415 over REST. */
export class UnsupportedDocumentTypeError extends DomainError {
  constructor() {
    super(
      'BAD_USER_INPUT',
      'The file is not an allowed type (PDF, DOCX, plain text, CSV, Markdown, HTML, PNG, JPEG, TIFF or WebP), judged by its bytes',
      { param: 'file', reason: 'unsupported_document_type' },
    );
  }
}

/** A file with no bytes. */
export class EmptyDocumentError extends DomainError {
  constructor() {
    super('BAD_USER_INPUT', 'The file is empty', { param: 'file', reason: 'empty_document' });
  }
}

/** The same bytes are already a document of this account and mode; `existingId` names it. */
export class DocumentDuplicateError extends GraphQLError {
  constructor(readonly existingId: string) {
    super(`The same file was already uploaded as document "${existingId}"`, {
      extensions: { code: 'CONFLICT', reason: 'document_duplicate', param: 'file', existingId },
    });
  }
}

/** A staged upload that is unknown, someone else's, expired, or already used. */
export class DocumentUploadNotFoundError extends DomainError {
  constructor(id: string) {
    super('NOT_FOUND', `No pending upload with id "${id}"`, { param: 'uploadId', reason: 'document_upload_not_found' });
  }
}

/** createDocument on an upload whose bytes never arrived. */
export class DocumentUploadIncompleteError extends DomainError {
  constructor(id: string) {
    super('CONFLICT', `Upload "${id}" has no file yet: PUT the bytes to its uploadPath first`, { param: 'uploadId', reason: 'document_upload_incomplete' });
  }
}

export class DocumentNotTrashedError extends DomainError {
  constructor(id: string) {
    super('CONFLICT', `Document "${id}" is not in the trash`, { param: 'id', reason: 'document_not_trashed' });
  }
}

export class UnknownDocumentCategoryError extends DomainError {
  constructor(category: string) {
    super('BAD_USER_INPUT', `"${category}" is not one of the account's document categories`, { param: 'category', reason: 'unknown_document_category' });
  }
}

/** base64 content that is not base64. */
export class InvalidDocumentContentError extends DomainError {
  constructor() {
    super('BAD_USER_INPUT', 'content must be the file in base64', { param: 'content', reason: 'invalid_document_content' });
  }
}
