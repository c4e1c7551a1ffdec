import { describe, expect, it } from 'vitest';
import { clientExtensions, internalErrorMessage, isClientError, isMasked } from '../../core/error-masking.js';

describe('what a client may see of an error', () => {
  it("shows the messages of the domain's, GraphQL's and Apollo Server's client errors and the edge's refusals, and of nothing else", () => {
    const client = [
      'UNAUTHENTICATED', 'FORBIDDEN', 'NOT_FOUND', 'BAD_USER_INPUT', 'CONFLICT', 'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED',
      'OPERATION_RESOLUTION_FAILURE', 'PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED', 'BAD_REQUEST', 'RATE_LIMITED',
    ];
    for (const code of client) expect(isClientError(code), code).toBe(true);
    for (const code of ['INTERNAL_SERVER_ERROR', 'DOWNSTREAM_SERVICE_ERROR', 'UNKNOWN', undefined, 42]) expect(isClientError(code), String(code)).toBe(false);
  });

  it('keeps the code, reason, param and request id of the extensions, and drops what servers add on the way', () => {
    expect(clientExtensions({ code: 'CONFLICT', reason: 'key_limit_reached', param: 'kind', requestId: 'req_1', http: { status: 409 }, serviceName: 'membership', stacktrace: ['at x'] }))
      .toEqual({ code: 'CONFLICT', reason: 'key_limit_reached', param: 'kind', requestId: 'req_1' });
    expect(clientExtensions({ code: 'NOT_FOUND', reason: undefined })).toEqual({ code: 'NOT_FOUND' });
    expect(clientExtensions(undefined)).toEqual({});
  });

  it('knows an error masked already by its generic message naming its own request id', () => {
    expect(isMasked({ message: internalErrorMessage('req_7'), extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'req_7' } })).toBe(true);
    expect(isMasked({ message: internalErrorMessage('req_7'), extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'req_8' } })).toBe(false);
    expect(isMasked({ message: 'relation "x" does not exist', extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'req_7' } })).toBe(false);
    expect(isMasked({ message: internalErrorMessage('req_7'), extensions: { code: 'CONFLICT', requestId: 'req_7' } })).toBe(false);
  });
});
