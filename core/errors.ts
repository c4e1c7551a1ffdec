import { ApolloServerErrorCode } from '@apollo/server/errors';
import { GraphQLError } from 'graphql';

/**
 * Codes every subgraph may raise. The edge maps each to an HTTP status and to the error names
 * of the specification the request came through (edge/rest/api-error.ts). SERVICE_UNAVAILABLE is
 * a dependency that cannot answer now (an inference engine down, loading or timed out): retrying
 * later may succeed, so it is told to the client rather than masked as internal.
 */
export const ERROR_CODES = ['UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT', 'CONFLICT', 'SERVICE_UNAVAILABLE', 'INTERNAL_SERVER_ERROR'] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The edge's own refusals, raised by no subgraph. */
const EDGE_ERROR_CODES = ['RATE_LIMITED'] as const;

/**
 * Codes of errors the client caused, whose messages are safe to show: the domain's, Apollo
 * Server's and GraphQL's own (parse, validation, variable coercion, operation resolution,
 * persisted queries, bad requests) and the edge's refusals; every one but INTERNAL_SERVER_ERROR.
 * Any other error is internal and reaches the client only as a request id (error-masking.ts).
 */
export const CLIENT_ERROR_CODES: ReadonlySet<string> = new Set(
  [...ERROR_CODES, ...Object.values(ApolloServerErrorCode), ...EDGE_ERROR_CODES].filter((code) => code !== ApolloServerErrorCode.INTERNAL_SERVER_ERROR),
);

/** Base of every domain error: a GraphQLError whose `extensions.code` says what went wrong. */
export class DomainError extends GraphQLError {
  constructor(code: ErrorCode, message: string, extra: { param?: string; reason?: string } = {}) {
    super(message, { extensions: { code, ...extra } });
  }
}
