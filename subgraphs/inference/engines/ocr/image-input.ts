import { EngineError } from '../../engine/text-engine.js';
import type { ImageFetcher } from './image-fetcher.js';
import { sniffImageFormat, type ImageFormat } from './image-format.js';

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

/**
 * The image a content part's url names, a base64 data URI or an http(s) URL, checked to be an
 * image Tesseract reads by its bytes. Refusals are `invalid_request` naming `param`.
 */
export async function readImageInput(raw: string, param: string, limits: ImageInputLimits): Promise<ImageInput> {
  let bytes: Buffer;
  if (/^data:/i.test(raw)) bytes = decodeDataUri(raw, param, limits.maxBytes);
  else bytes = await fetchImage(raw, param, limits);
  const format = sniffImageFormat(bytes);
  if (!format) throw new EngineError('invalid_request', 'The image is not a PNG, JPEG, GIF, BMP, WebP or TIFF image', param);
  return { bytes, format };
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
    throw new EngineError('invalid_request', 'An image url must be an http(s) URL or a base64 data URI', param);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EngineError('invalid_request', 'An image url must be an http(s) URL or a base64 data URI', param);
  if (url.username || url.password) throw new EngineError('invalid_request', 'An image URL must not carry credentials', param);
  try {
    return await limits.fetcher(url, { maxBytes: limits.maxBytes, timeoutMs: limits.fetchTimeoutMs, signal: limits.signal });
  } catch (error) {
    if (error instanceof EngineError && !error.param) throw new EngineError(error.reason, error.message, param);
    throw error;
  }
}
