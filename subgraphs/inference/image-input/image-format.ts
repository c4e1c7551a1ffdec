/** The image formats the embedded Tesseract (Leptonica inside tesseract.js-core) decodes. */
export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'bmp' | 'webp' | 'tiff';

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + signature.length) return false;
  return signature.every((byte, i) => bytes[offset + i] === byte);
}

const BMP_INFO_HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);

const ascii = (text: string): number[] => [...text].map((c) => c.charCodeAt(0));

/**
 * The format the bytes are in, read from their signature (a client's declared MIME type is not
 * trusted), or null when they are none of the formats Tesseract reads.
 */
export function sniffImageFormat(bytes: Uint8Array): ImageFormat | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'gif';
  // "BM" alone starts plenty of text too: also require one of the known info-header sizes.
  if (startsWith(bytes, ascii('BM')) && bytes.length >= 26 && BMP_INFO_HEADER_SIZES.has(new DataView(bytes.buffer, bytes.byteOffset).getUint32(14, true))) return 'bmp';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'webp';
  if (startsWith(bytes, [0x49, 0x49, 0x2a, 0x00]) || startsWith(bytes, [0x4d, 0x4d, 0x00, 0x2a])) return 'tiff';
  return null;
}
