import type { ErrorFormat } from '../../rest/api-error.js';

const MEMBERSHIP_TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  405: 'invalid_request_error',
  408: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
};

/** The membership API: `{"error": {type, code, message, param, request_id}}`, Stripe's shape. */
export const membershipErrorFormat: ErrorFormat = (error, requestId) => ({
  error: {
    type: MEMBERSHIP_TYPE_BY_STATUS[error.status] ?? 'api_error',
    code: error.code,
    message: error.message,
    param: error.param ?? null,
    ...(error.existingId ? { existing_id: error.existingId } : {}),
    request_id: requestId,
  },
});
