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

/**
 * Codes of errors the client caused, whose messages are safe to show: the domain's, GraphQL's
 * own (parse, validation, variable coercion, operation resolution) and the edge's refusals. Any
 * other error is internal and reaches the client only as a request id (error-masking.ts).
 */
export const CLIENT_ERROR_CODES: ReadonlySet<string> = new Set([
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  'BAD_USER_INPUT',
  'CONFLICT',
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'BAD_REQUEST',
  'RATE_LIMITED',
]);

/** Base of every domain error: a GraphQLError whose `extensions.code` says what went wrong. */
export class DomainError extends GraphQLError {
  constructor(code: ErrorCode, message: string, extra: { param?: string; reason?: string } = {}) {
    super(message, { extensions: { code, ...extra } });
  }
}
