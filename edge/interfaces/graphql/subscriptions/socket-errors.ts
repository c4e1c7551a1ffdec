import { GraphQLError, type ExecutionResult, type FormattedExecutionResult } from 'graphql';
import type { Logger } from 'pino';
import { clientExtensions, internalErrorMessage, isClientError, isMasked } from '../../../../core/error-masking.js';
import { UNAVAILABLE_MESSAGE } from '../../../federation/signing-data-source.js';

/**
 * What a client may see of an event's errors. graphql-ws serialises errors with their toJSON,
 * which an upstream subgraph's errors (plain objects off its socket) lack: it would fail and the
 * client would see a bare `complete`; so every error is rebuilt with its message, path and client
 * extensions. Subgraphs mask their own internal errors (under this operation's request id), but
 * the edge's per-event fetches of other subgraphs' fields can fail here too (an unreachable
 * service, with its address in the message): any such error gets the generic message and the
 * request id, as over HTTP.
 */
export function clientErrors(result: ExecutionResult, requestId: string, logger: Logger): ExecutionResult {
  if (!result.errors?.length) return result;
  return {
    ...result,
    errors: result.errors.map((error: unknown) => {
      const plain = error as { message?: unknown; path?: readonly (string | number)[]; extensions?: Record<string, unknown> };
      if (!isMasked(plain) && !isClientError(plain.extensions?.code)) return internalError(error, requestId, logger, 'internal error in a subscription event', plain.path);
      return new GraphQLError(String(plain.message), { path: plain.path, extensions: clientExtensions(plain.extensions) });
    }),
  };
}

/** An error that is not the client's doing: logged under the request id, which is all the client is told, as over HTTP. */
export function internalError(error: unknown, requestId: string, logger: Logger, what: string, path?: readonly (string | number)[]): GraphQLError {
  logger.error({ err: error, requestId, path }, `${what}; the client was told only the request id`);
  return new GraphQLError(internalErrorMessage(requestId), { path, extensions: { code: 'INTERNAL_SERVER_ERROR', requestId } });
}

/**
 * Why a subscription's upstream operation ended in failure, as the client's error: the subgraph's
 * own refusal (an `error` message, errors it formatted and masked) keeps its message and code;
 * its socket lost or never opened is SERVICE_UNAVAILABLE, as an unreachable subgraph is over HTTP.
 */
export function upstreamFailure(error: unknown, requestId: string, logger: Logger): GraphQLError {
  if (Array.isArray(error) && error.length) return clientErrors({ errors: error }, requestId, logger).errors![0];
  // ws hands its events (ErrorEvent, CloseEvent) with the socket on them: the log keeps their gist.
  const { error: cause, message, code, reason } = (error ?? {}) as { error?: unknown; message?: unknown; code?: unknown; reason?: unknown };
  logger.warn({ err: error instanceof Error ? error : cause, upstream: { message, code, reason }, requestId }, 'a subscription lost its subgraph operation');
  return new GraphQLError(UNAVAILABLE_MESSAGE, { extensions: { code: 'SERVICE_UNAVAILABLE', reason: 'service_unavailable', requestId } });
}

/** A validation or variable error with the code Apollo gives it over HTTP, and of its extensions what a client sees there. */
export function withCode(error: GraphQLError, code: string): GraphQLError {
  return new GraphQLError(error.message, { nodes: error.nodes, extensions: clientExtensions({ ...error.extensions, code }) });
}

/**
 * graphql-ws writes each error of a result with GraphQLError's toJSON. Apollo's answers (queries
 * and mutations) carry errors it formatted and masked already: plain objects, written as they
 * are; calling toJSON on them threw, and graphql-ws closed the socket.
 */
export function formattedResult(result: ExecutionResult): FormattedExecutionResult | undefined {
  if (!result.errors?.some((error) => !(error instanceof GraphQLError))) return undefined;
  return { ...result, errors: result.errors.map((error) => (error instanceof GraphQLError ? error.toJSON() : error)) };
}

export function refuse(message: string, code: string, reason: string): readonly GraphQLError[] {
  return [new GraphQLError(message, { extensions: { code, reason } })];
}
