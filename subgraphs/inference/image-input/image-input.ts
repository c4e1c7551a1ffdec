import { EngineError } from '../engine/text-engine.js';
import type { ImageFetcher } from './image-fetcher.js';
import { sniffImageFormat, type ImageFormat } from './image-format.js';

/** The limits on an image of a chat when the engine's options name none (also the configuration's defaults). */
export const IMAGE_INPUT_DEFAULTS = {
  maxImageBytes: 10 * 1024 * 1024,
  imageFetchTimeoutMs: 10_000,
} as const;

export interface ImageInputLimits {
  maxBytes: number;
  fetchTimeoutMs: number;
  fetcher: ImageFetcher;
  signal: AbortSignal;
}

export interface ImageInput {
  bytes: Buffer;
  format: ImageFormat;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const NOT_HTTP_OR_DATA = 'An image url must be an http(s) URL or a base64 data URI';

/** Whether a content part's url has a scheme the spec allows: http(s) or a data URI. */
export function isHttpOrDataUrl(raw: string): boolean {
  return /^(https?:\/\/|data:)/i.test(raw);
}

/** The refusal of a url that is neither http(s) nor a data URI. */
export const IMAGE_URL_SCHEMES_MESSAGE = `${NOT_HTTP_OR_DATA} (data:<mime>;base64,<data>)`;

/**
 * The image a content part's url names, a base64 data URI or an http(s) URL, checked to be an
 * image by its bytes. Refusals are `invalid_request` naming `param`.
 */
export async function readImageInput(raw: string, param: string, limits: ImageInputLimits): Promise<ImageInput> {
  let bytes: Buffer;
  if (/^data:/i.test(raw)) bytes = decodeDataUri(raw, param, limits.maxBytes);
  else bytes = await fetchImage(raw, param, limits);
  const format = sniffImageFormat(bytes);
  if (!format) throw new EngineError('invalid_request', 'The image is not a PNG, JPEG, GIF, BMP, WebP or TIFF image', param);
  return { bytes, format };
}

/**
 * A content part's url as an upstream model may be given it: a data URI as it came, an http(s)
 * URL fetched here (the guard, the limits) and turned into a data URI of the image's own type, so
 * that the upstream never fetches anything from its own network. Anything else is refused.
 */
export async function inlineImageUrl(raw: string, param: string, limits: ImageInputLimits): Promise<string> {
  if (/^data:/i.test(raw)) return raw;
  const { bytes, format } = await readImageInput(raw, param, limits);
  return `data:image/${format};base64,${bytes.toString('base64')}`;
}

function decodeDataUri(raw: string, param: string, maxBytes: number): Buffer {
  const comma = raw.indexOf(',');
  const meta = comma < 0 ? '' : raw.slice(5, comma);
  if (comma < 0 || !meta.split(';').slice(1).some((p) => p.toLowerCase() === 'base64')) {
    throw new EngineError('invalid_request', 'An image data URI must have the form data:<mime>;base64,<data>', param);
  }
  const data = raw.slice(comma + 1);
  // Buffer.from skips characters that are not base64, so junk would decode to something: check first.
  if (data.length === 0 || data.length % 4 !== 0 || !BASE64.test(data)) throw new EngineError('invalid_request', 'The image data URI is not valid base64', param);
  const decodedLength = (data.length / 4) * 3 - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
  if (decodedLength > maxBytes) throw new EngineError('invalid_request', `The image is ${decodedLength} bytes, over the limit of ${maxBytes}`, param);
  return Buffer.from(data, 'base64');
}

async function fetchImage(raw: string, param: string, limits: ImageInputLimits): Promise<Buffer> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new EngineError('invalid_request', NOT_HTTP_OR_DATA, param);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EngineError('invalid_request', NOT_HTTP_OR_DATA, param);
  if (url.username || url.password) throw new EngineError('invalid_request', 'An image URL must not carry credentials', param);
  try {
    return await limits.fetcher(url, { maxBytes: limits.maxBytes, timeoutMs: limits.fetchTimeoutMs, signal: limits.signal });
  } catch (error) {
    if (error instanceof EngineError && !error.param) throw new EngineError(error.reason, error.message, param);
    throw error;
  }
}
