import { ImageEngineError } from '../../engine/image-engine.js';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The bytes of a base64 image as the WebUI API sends them: bare base64, or a data:image/...;base64,
 * URI (the WebUI strips that prefix too). Whitespace (line-wrapped base64) is dropped; anything else
 * outside the alphabet, and a URL, is refused as `invalid_request` naming `param`.
 */
export function decodeBase64Image(raw: unknown, param: string, maxBytes: number): Buffer {
  if (typeof raw !== 'string' || raw === '') throw new ImageEngineError('invalid_request', `${param} must be a base64 image`, param);
  if (/^https?:\/\//i.test(raw)) throw new ImageEngineError('invalid_request', `${param} must be sent as base64: images are not fetched by URL`, param);
  let data = raw;
  if (/^data:/i.test(raw)) {
    const comma = raw.indexOf(',');
    if (comma < 0 || !/;base64$/i.test(raw.slice(0, comma))) throw new ImageEngineError('invalid_request', `${param} as a data URI must have the form data:image/<type>;base64,<data>`, param);
    data = raw.slice(comma + 1);
  }
  data = data.replace(/\s+/g, '');
  // Buffer.from skips characters that are not base64, so junk would decode to something: check first.
  if (!BASE64.test(data) || data.length % 4 === 1) throw new ImageEngineError('invalid_request', `${param} is not valid base64`, param);
  const unpadded = data.replace(/=+$/, '');
  const decodedLength = Math.floor((unpadded.length * 3) / 4);
  if (decodedLength > maxBytes) throw new ImageEngineError('invalid_request', `${param} is ${decodedLength} bytes, over the limit of ${maxBytes}`, param);
  return Buffer.from(data, 'base64');
}
