import { DomainError } from '../../../core/errors.js';

export type ExtractionFailureReason = 'encrypted' | 'corrupt' | 'unsupported' | 'empty';

/**
 * Why a document's text could not be extracted: encrypted (a password-protected PDF), corrupt (the
 * bytes do not parse as their type), unsupported (a type with no extractor), empty (no text at all).
 * A processing outcome to store on the document, not a crash.
 */
export class ExtractionFailure extends DomainError {
  constructor(
    readonly reason: ExtractionFailureReason,
    message: string,
  ) {
    super('BAD_USER_INPUT', message, { reason: `document_${reason}` });
    this.name = 'ExtractionFailure';
  }
}
