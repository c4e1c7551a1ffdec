/**
 * OpenAI's error body, `{"error": {message, type, param, code}}`, as the openai SDKs read it: the
 * one owner of that wire format, for the edge's refusals and the inference subgraph's answers.
 * The types follow OpenAI's API (a wrong or missing key is 401 `invalid_request_error` there).
 */
const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'invalid_request_error',
  403: 'permission_error',
  404: 'invalid_request_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
};

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

export function openAIErrorBody(error: { status: number; code: string; message: string; param?: string | null }): OpenAIErrorBody {
  return {
    error: {
      message: error.message,
      type: TYPE_BY_STATUS[error.status] ?? (error.status >= 500 ? 'server_error' : 'invalid_request_error'),
      param: error.param ?? null,
      code: error.code,
    },
  };
}
