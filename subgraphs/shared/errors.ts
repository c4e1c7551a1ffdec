import { GraphQLError } from 'graphql';

/**
 * Codes every subgraph may raise. The edge maps each to an HTTP status and to the error names
 * of the specification the request came through (rest-bridge/errors.ts).
 */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'BAD_USER_INPUT'
  | 'CONFLICT'
  | 'INTERNAL_SERVER_ERROR';

/** Base of every domain error: a GraphQLError whose `extensions.code` says what went wrong. */
export class DomainError extends GraphQLError {
  constructor(code: ErrorCode, message: string, extra: { param?: string; reason?: string } = {}) {
    super(message, { extensions: { code, ...extra } });
  }
}
