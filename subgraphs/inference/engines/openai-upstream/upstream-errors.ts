import { EngineError } from '../../engine/text-engine.js';

/** What an upstream said about a failure, read from any of the documented error bodies. */
export interface UpstreamFailure {
  status: number;
  message?: string;
  type?: string;
  param?: string;
}

// Error bodies: vLLM's current `{"error":{"message","type","param","code"}}`, its earlier flat
// `{"object":"error","message","type","param","code"}`, llama.cpp's `{"error":{"code","message","type"}}`,
// OpenAI's and Ollama's (the same nesting, string codes) and FastAPI's `{"detail": ...}`.

/** What an upstream's error body says, whichever of the documented shapes it has. */
export function readFailure(status: number, body: unknown): UpstreamFailure {
  const record = isRecord(body) ? body : {};
  const inner = isRecord(record.error) ? record.error : record;
  const code = typeof inner.code === 'number' ? inner.code : undefined;
  return {
    status: status >= 400 ? status : (code ?? 500),
    message: typeof inner.message === 'string' ? inner.message : typeof record.detail === 'string' ? record.detail : undefined,
    type: typeof inner.type === 'string' ? inner.type : undefined,
    param: typeof inner.param === 'string' && inner.param !== '' ? inner.param : undefined,
  };
}

/** Whether a parsed SSE payload is an error object rather than a chunk. */
export function isErrorPayload(payload: unknown): boolean {
  return isRecord(payload) && (isRecord(payload.error) || payload.object === 'error');
}

/**
 * The EngineError for an upstream's HTTP failure. The message is ours: the upstream's own words
 * (which can quote the prompt, paths or addresses) only go to the log.
 */
export function engineErrorFor(failure: UpstreamFailure, model: string | undefined): EngineError {
  const { status, message = '', type = '' } = failure;
  // llama.cpp answers 503 {"message":"Loading model","type":"unavailable_error"} until its model is
  // in memory; the same type without that message is an overloaded server.
  if (status === 503 && /loading/i.test(message))
    return new EngineError('model_loading', 'The model is still loading on the upstream engine');
  if (status === 404) {
    // A route the upstream lacks is its configuration, not the caller's model.
    if (/model/i.test(message) || type === 'NotFoundError') return new EngineError('model_not_found', model ? `No model "${model}" on the upstream engine` : 'No such model on the upstream engine', 'model');
    return new EngineError('upstream_error', 'The upstream engine does not serve this route');
  }
  if (status === 400 || status === 422) {
    if (type === 'exceed_context_size_error' || /context (length|size|window)|maximum context/i.test(message))
      return new EngineError('invalid_request', "The prompt and max_tokens exceed the model's context length", 'max_tokens');
    const param = failure.param;
    return new EngineError('invalid_request', param ? `The upstream engine refused the parameter ${param}` : 'The upstream engine refused the request', param);
  }
  if (status === 401 || status === 403) return new EngineError('upstream_error', 'The upstream engine refused the configured credentials');
  if (status === 408 || status === 504) return new EngineError('timeout', 'The upstream engine did not answer in time');
  if (status === 429 || status === 503) return new EngineError('unavailable', 'The upstream engine is busy or unavailable');
  return new EngineError('upstream_error', 'The upstream engine failed');
}

/** The EngineError for a failure of the connection itself (undici and Node error codes). */
export function engineErrorForConnection(error: unknown, phase: 'connect' | 'stream'): EngineError {
  const code = errorCode(error);
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return new EngineError('timeout', 'The upstream engine did not answer in time');
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED'].includes(code ?? ''))
    return new EngineError('unavailable', 'The upstream engine cannot be reached');
  // Before any answer, a reset or closed socket is an upstream that is going away; after, it
  // dropped an answer it had begun.
  if (phase === 'connect') return new EngineError('unavailable', 'The upstream engine cannot be reached');
  return new EngineError('upstream_error', 'The upstream engine closed the connection');
}

function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; isRecord(current) && depth < 4; current = current.cause, depth++) {
    if (typeof current.code === 'string') return current.code;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
