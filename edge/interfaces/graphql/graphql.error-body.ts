import { STATUS_BY_CODE, type ErrorFormat } from '../../rest/api-error.js';

const GRAPHQL_CODE_BY_STATUS: Record<number, string> = Object.fromEntries(
  Object.entries(STATUS_BY_CODE).map(([code, status]) => [status, code]),
);

/**
 * GraphQL clients get the edge's errors as a GraphQL response: code in extensions, spec name as
 * reason; a failure that is not the client's names the request id, as masked errors do.
 */
export const graphqlErrorFormat: ErrorFormat = (error, requestId) => ({
  errors: [
    {
      message: error.message,
      extensions: {
        code: GRAPHQL_CODE_BY_STATUS[error.status] ?? 'BAD_REQUEST',
        reason: error.code,
        ...(error.param ? { param: error.param } : {}),
        ...(error.status >= 500 ? { requestId } : {}),
      },
    },
  ],
});
