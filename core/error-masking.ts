import { randomUUID } from 'node:crypto';
import type { ApolloServerPlugin } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import type { GraphQLFormattedError } from 'graphql';
import type { Logger } from 'pino';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from './database-unavailable.js';
import { CLIENT_ERROR_CODES } from './errors.js';

/** What a client is told of an error that is not its own doing. */
export function internalErrorMessage(requestId: string): string {
  return `Internal server error (request ${requestId})`;
}

/** Whether `code` marks an error the client caused, whose message it may see. */
export function isClientError(code: unknown): code is string {
  return typeof code === 'string' && CLIENT_ERROR_CODES.has(code);
}

/** What a client may see of an error's extensions: its code, reason, param and request id; nothing a server added on the way. */
export function clientExtensions(extensions: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  // existingId: the document a duplicate upload (409 document_duplicate) already made.
  // from, to: the states an illegal transition (409 illegal_tender_transition, …) was refused between.
  const { code, reason, param, requestId, existingId, from, to } = extensions ?? {};
  return Object.fromEntries(Object.entries({ code, reason, param, requestId, existingId, from, to }).filter(([, value]) => value !== undefined));
}

/**
 * An error masked already, by a subgraph or by an earlier step: its original is in the log under
 * its request id, so it is passed on as it is, neither masked nor logged again.
 */
export function isMasked(error: { message?: unknown; extensions?: Readonly<Record<string, unknown>> }): boolean {
  const { code, requestId } = error.extensions ?? {};
  return code === 'INTERNAL_SERVER_ERROR' && typeof requestId === 'string' && error.message === internalErrorMessage(requestId);
}

/**
 * Keeps the message of errors the client caused (domain errors and GraphQL's own validation and
 * coercion errors, by their code) and replaces any other, whose message may carry SQL, values or
 * addresses, with a generic one naming the request id; the original goes to the log under that id.
 * Apollo passes the same error objects to plugins and to formatError, so the plugin notes each
 * error's request id and formatError reads it back (errors raised outside a request, such as a
 * failed context, get an id of their own).
 */
export function errorMasking<C>(options: { logger: Logger; requestIdOf: (context: C) => string | undefined }): {
  plugin: ApolloServerPlugin<C & object>;
  /** `requestId` is for errors Apollo's plugin never saw (a websocket event's): the caller knows the id. */
  formatError: (formatted: GraphQLFormattedError, error: unknown, requestId?: string) => GraphQLFormattedError;
} {
  const requestIds = new WeakMap<object, string>();
  return {
    plugin: {
      async requestDidStart({ contextValue }) {
        const requestId = options.requestIdOf(contextValue) ?? `req_${randomUUID()}`;
        return {
          async didEncounterErrors({ errors }) {
            for (const error of errors) requestIds.set(error, requestId);
          },
        };
      },
    },
    formatError: (formatted, error, knownRequestId) => {
      if (isClientError(formatted.extensions?.code) || isMasked(formatted)) return formatted;
      const requestId = (error !== null && typeof error === 'object' && requestIds.get(error)) || knownRequestId || `req_${randomUUID()}`;
      // The database down or restarting: the client may retry (503 over REST), told nothing of why.
      if (isDatabaseUnavailable(unwrapResolverError(error))) {
        options.logger.warn({ err: unwrapResolverError(error), requestId, path: formatted.path }, 'the database is unavailable; the client was told to retry');
        return { message: DATABASE_UNAVAILABLE_MESSAGE, ...(formatted.path ? { path: formatted.path } : {}), extensions: { code: 'SERVICE_UNAVAILABLE', reason: 'service_unavailable', requestId } };
      }
      options.logger.error({ err: unwrapResolverError(error), requestId, path: formatted.path }, 'internal error; the client was told only the request id');
      return {
        message: internalErrorMessage(requestId),
        ...(formatted.locations ? { locations: formatted.locations } : {}),
        ...(formatted.path ? { path: formatted.path } : {}),
        extensions: { code: 'INTERNAL_SERVER_ERROR', requestId },
      };
    },
  };
}
