import type { GraphQLFormattedError } from 'graphql';

/** HTTP status for each error code a subgraph or the gateway may raise. */
export const STATUS_BY_CODE: Record<string, number> = {
  BAD_USER_INPUT: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  GRAPHQL_PARSE_FAILED: 400,
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  RATE_LIMITED: 429,
};

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  429: 'rate_limit_error',
};

/** The membership API's one error body: `{"error": {type, code, message, param, request_id}}`. */
export interface RestErrorBody {
  error: { type: string; code: string; message: string; param: string | null; request_id: string };
}

export function restError(
  status: number,
  fields: { code: string; message: string; param?: string | null },
  requestId: string,
): RestErrorBody {
  return {
    error: {
      type: TYPE_BY_STATUS[status] ?? 'api_error',
      code: fields.code,
      message: fields.message,
      param: fields.param ?? null,
      request_id: requestId,
    },
  };
}

/**
 * Turns GraphQL errors into one REST status and body. The most severe error wins; a specific
 * `reason` (e.g. member_email_taken) is preferred to the generic code as the REST code.
 */
export function restErrorFromGraphQL(
  errors: readonly GraphQLFormattedError[],
  requestId: string,
): { status: number; body: RestErrorBody } {
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
  // GraphQL's own input errors name the variable only in the message ("Variable "$name" ...").
  const variable = chosen?.message.match(/^Variable "\$(\w+)"/)?.[1];
  const code = String(extensions.code ?? '');
  const fallback = status === 500 ? 'internal_error' : status === 400 ? 'invalid_parameter' : code.toLowerCase();
  return {
    status,
    body: restError(
      status,
      {
        code: typeof extensions.reason === 'string' ? extensions.reason : fallback,
        // Internal failures are not described to the client; the request id finds them in the log.
        message: status === 500 ? 'An internal error occurred' : (chosen?.message ?? 'Request failed'),
        param: typeof extensions.param === 'string' ? extensions.param : (variable ?? null),
      },
      requestId,
    ),
  };
}
