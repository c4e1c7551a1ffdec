import type { ErrorFormat } from '../../rest/api-error.js';

/**
 * The traceroute API: the error name at the top, as its specification's error table lists them.
 * Its table has one name for every 404, `not_found`.
 */
export const tracerouteErrorFormat: ErrorFormat = (error, requestId) => ({
  error: error.status === 404 ? 'not_found' : error.code,
  message: error.message,
  ...(error.param ? { param: error.param } : {}),
  request_id: requestId,
});
