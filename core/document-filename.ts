import { DomainError } from './errors.js';

/** The longest file name a document keeps, in UTF-16 code units as the GraphQL inputs count them. */
export const MAX_FILENAME_LENGTH = 255;

/** What a name given with no usable last segment (`..`, `dir/`) is kept as. */
const UNNAMED = 'upload';

// C0 controls (NUL, line breaks, ...) and DEL; in a u-mode pattern only a lone surrogate is \p{Cs}.
const UNKEPT = /[\u0000-\u001f\u007f]|\p{Cs}/u;

/**
 * The name a document is kept and offered for download under, whichever way its bytes came (JSON,
 * multipart, a createDocumentUpload ticket): the last segment of a path, by `/` or `\`
 * (`../../etc/passwd` is `passwd`), `upload` when none is left, as busboy keeps a multipart file's.
 * Control characters and lone surrogates are refused, not dropped: PostgreSQL cannot store NUL,
 * and a name is the client's to fix, not ours to guess. So is one longer than 255 characters.
 */
export function storedFilename(given: string): string {
  if (UNKEPT.test(given)) {
    throw new DomainError('BAD_USER_INPUT', 'filename must not contain control characters (NUL included) or unpaired surrogates', { param: 'filename', reason: 'invalid_parameter' });
  }
  const last = given.slice(Math.max(given.lastIndexOf('/'), given.lastIndexOf('\\')) + 1);
  const name = last === '.' || last === '..' || !last.trim() ? UNNAMED : last;
  if (name.length > MAX_FILENAME_LENGTH) {
    throw new DomainError('BAD_USER_INPUT', `filename must be at most ${MAX_FILENAME_LENGTH} characters`, { param: 'filename', reason: 'invalid_parameter' });
  }
  return name;
}
