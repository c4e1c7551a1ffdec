import type { Response } from 'express';
import type { GraphQLFormattedError } from 'graphql';

/** HTTP status for each error code a subgraph or the gateway may raise. */
export const STATUS_BY_CODE: Record<string, number> = {
  BAD_USER_INPUT: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  GRAPHQL_PARSE_FAILED: 400,
  OPERATION_RESOLUTION_FAILURE: 400,
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMITED: 429,
  // A subgraph down or a dependency not answering now: worth a retry, unlike a 500.
  SERVICE_UNAVAILABLE: 503,
};

/** An error as the edge decided it, before a specification's wire format is applied. */
export interface ApiError {
  status: number;
  /** The specification's error name, e.g. `member_not_found`, `key_disabled`. */
  code: string;
  message: string;
  param?: string | null;
  /** The id of the record a conflict is with (e.g. the active application a second one repeats). */
  existingId?: string;
}

/** One specification's error body. */
export type ErrorFormat = (error: ApiError, requestId: string) => object;

/** Retry-After of a 503 that knows no better: the supervisor brings a service or the database back within seconds. */
const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** Sends `error` in `format`, with its status (a 503 with Retry-After). */
export function sendApiError(res: Response, format: ErrorFormat, error: ApiError, requestId: string): void {
  if (error.status === 503 && !res.hasHeader('retry-after')) res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  res.status(error.status).json(format(error, requestId));
}

/**
 * A GraphQL variable error in a REST client's words: REST has parameters, not variables, types
 * or GraphQL's phrasing (the strict parameter check catches most before GraphQL; this is the rest).
 */
function restWording(message: string, param: string): { code: string; message: string } {
  if (/ of required type .* was not provided\.?$/.test(message)) return { code: 'missing_parameter', message: `Missing required parameter: ${param}` };
  if (/ of non-null type .* must not be null\.?$/.test(message)) return { code: 'invalid_parameter', message: `${param} cannot be null` };
  const value = /got invalid value (.*?)(?: at "[^"]*")?;/.exec(message)?.[1];
  return { code: 'invalid_parameter', message: value ? `${param} has an invalid value: ${value}` : `${param} has an invalid value` };
}

/**
 * Turns GraphQL errors into one API error. The most severe error wins; a specific `reason` (e.g.
 * member_email_taken) is preferred to the generic code as the REST code.
 */
export function apiErrorFromGraphQL(errors: readonly GraphQLFormattedError[]): ApiError {
  let chosen = errors[0];
  let status = 500;
  for (const error of errors) {
    const code = String(error.extensions?.code ?? '');
    const httpStatus = (error.extensions?.http as { status?: number } | undefined)?.status;
    const candidate = STATUS_BY_CODE[code] ?? httpStatus ?? 500;
    if (status === 500 || (candidate !== 500 && candidate > status)) {
      status = candidate;
      chosen = error;
    }
  }
  const extensions = chosen?.extensions ?? {};
  const code = String(extensions.code ?? '');
  // GraphQL's own input errors name the variable only in the message ("Variable "$name" ...").
  const variable = chosen?.message.match(/^Variable "\$(\w+)"/)?.[1];
  const reworded = variable && chosen ? restWording(chosen.message, variable) : undefined;
  const fallback = status === 500 ? 'internal_error' : status === 400 ? 'invalid_parameter' : code.toLowerCase();
  return {
    status,
    code: typeof extensions.reason === 'string' ? extensions.reason : (reworded?.code ?? fallback),
    // Internal failures are not described to the client; the request id finds them in the log.
    message: status === 500 ? 'An internal error occurred' : (reworded?.message ?? chosen?.message ?? 'Request failed'),
    param: typeof extensions.param === 'string' ? extensions.param : (variable ?? null),
    ...(typeof extensions.existingId === 'string' && status !== 500 ? { existingId: extensions.existingId } : {}),
  };
}
