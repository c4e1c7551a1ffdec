import { ImageEngineError } from '../../engine/image-engine.js';

/** What a WebUI said about a failure, read from either of its error bodies. */
export interface SdWebuiFailure {
  status: number;
  /** FastAPI's 422: the first invalid field, by its name in the request body. */
  field?: string;
  /** The WebUI's own body: the exception's class name (HTTPException, AssertionError, OutOfMemoryError ...). */
  error?: string;
  /** Its `detail`, or FastAPI's first `msg`: only logged, and matched against the WebUI's fixed phrases. */
  detail?: string;
  /** Its `errors` (str(exception)): only logged. */
  errors?: string;
}

/** The operation a failure came from, which decides what a WebUI phrase refers to. */
export type SdWebuiOperation = 'txt2img' | 'img2img' | 'upscale' | 'listing';

// Two bodies: FastAPI's validation answer `{"detail": [{"loc": ["body", "steps"], "msg", "type"}]}`
// (422), and the WebUI's handler for everything else, `{"error": type(e).__name__, "detail",
// "body", "errors": str(e)}` with the exception's status (HTTPException's, else 500).

/** What a WebUI's error body says, whichever of its shapes it has. */
export function readSdWebuiFailure(status: number, body: unknown): SdWebuiFailure {
  const failure: SdWebuiFailure = { status };
  if (!isRecord(body)) return failure;
  if (Array.isArray(body.detail)) {
    const first = body.detail.find(isRecord);
    if (first) {
      const loc = Array.isArray(first.loc) ? first.loc.filter((part) => typeof part === 'string' || typeof part === 'number') : [];
      const path = loc[0] === 'body' ? loc.slice(1) : loc;
      const field = path.find((part): part is string => typeof part === 'string');
      if (field) failure.field = field;
      if (typeof first.msg === 'string') failure.detail = first.msg;
    }
    return failure;
  }
  if (typeof body.error === 'string') failure.error = body.error;
  if (typeof body.detail === 'string' && body.detail !== '') failure.detail = body.detail;
  if (typeof body.errors === 'string' && body.errors !== '') failure.errors = body.errors;
  return failure;
}

const IMAGE_PARAM: Record<SdWebuiOperation, string | undefined> = { txt2img: undefined, img2img: 'init_images', upscale: 'image', listing: undefined };

/**
 * The ImageEngineError for a WebUI's HTTP failure. The message is ours: the WebUI's own words (a
 * traceback's str(e) can quote prompts, paths and addresses) only go to the log. `names` carries
 * what the request named, so a refusal can name it without reading it back from the upstream.
 */
export function imageEngineErrorFor(failure: SdWebuiFailure, operation: SdWebuiOperation, names: { checkpoint?: string; upscaler?: string } = {}): ImageEngineError {
  const { status, detail = '', error = '', errors = '' } = failure;
  if (status === 422 && failure.field) return new ImageEngineError('invalid_request', `The image engine refused the parameter ${failure.field}`, failure.field);
  // The WebUI's fixed HTTPException details (modules/api/api.py).
  if (detail === 'Sampler not found') return new ImageEngineError('invalid_request', 'The image engine has no such sampler', 'sampler_name');
  if (detail === 'Model not found') return new ImageEngineError('model_not_found', names.checkpoint ? `No checkpoint "${names.checkpoint}" on the image engine` : 'No such checkpoint on the image engine', 'sd_model_checkpoint');
  if (detail === 'Init image not found') return new ImageEngineError('invalid_request', 'init_images is required', 'init_images');
  if (/^Script '.*' not found$|^always on script .* not found$|selectable script in the always on/i.test(detail))
    return new ImageEngineError('invalid_request', 'The image engine has no such script', /always on/i.test(detail) ? 'alwayson_scripts' : 'script_name');
  if (detail === 'Invalid encoded image' || detail === 'Invalid image url')
    return new ImageEngineError('invalid_request', 'An image is not a valid base64 image', IMAGE_PARAM[operation]);
  if (detail === 'Requests not allowed' || detail === 'Request to local resource not allowed')
    return new ImageEngineError('invalid_request', 'The image engine does not fetch images by URL: send them as base64', IMAGE_PARAM[operation]);
  // postprocessing_upscale.py asserts the upscaler exists: a 500 AssertionError.
  if (operation === 'upscale' && error === 'AssertionError' && /could not find upscaler/i.test(errors))
    return new ImageEngineError('not_available', `No upscaler "${names.upscaler ?? ''}" on the image engine`, 'upscaler_1');
  if (status === 400 || status === 422) return new ImageEngineError('invalid_request', 'The image engine refused the request', failure.field);
  if (status === 401 || status === 403) return new ImageEngineError('upstream_error', 'The image engine refused the configured credentials');
  if (status === 404) return new ImageEngineError('upstream_error', 'The image engine does not serve this route');
  if (status === 408 || status === 504) return new ImageEngineError('timeout', 'The image engine did not answer in time');
  if (status === 429 || status === 503) return new ImageEngineError('unavailable', 'The image engine is busy or unavailable');
  return new ImageEngineError('upstream_error', 'The image engine failed');
}

/** The ImageEngineError for a failure of the connection itself (undici and Node error codes). */
export function imageEngineErrorForConnection(error: unknown, phase: 'connect' | 'answer'): ImageEngineError {
  const code = errorCode(error);
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return new ImageEngineError('timeout', 'The image engine did not answer in time');
  if (phase === 'connect' || ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED'].includes(code ?? ''))
    return new ImageEngineError('unavailable', 'The image engine cannot be reached');
  return new ImageEngineError('upstream_error', 'The image engine closed the connection');
}

function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; isRecord(current) && depth < 4; current = current.cause, depth++) {
    if (typeof current.code === 'string') return current.code;
  }
  return undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
