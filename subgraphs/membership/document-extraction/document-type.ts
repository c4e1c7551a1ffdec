import { fileTypeFromBuffer } from 'file-type';

export const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** The MIME types a document may have; anything else is refused (415). */
export const ALLOWED_TYPES: readonly string[] = [
  'application/pdf',
  DOCX_MIME,
  'text/plain',
  'text/csv',
  'text/markdown',
  'text/html',
  'image/png',
  'image/jpeg',
  'image/tiff',
  'image/webp',
];

/** How many leading bytes the sniffer looks at; callers may pass more, the rest is ignored. */
export const SNIFF_BYTES = 64 * 1024;

const BINARY_EXT: Record<string, string> = {
  'application/pdf': 'pdf',
  [DOCX_MIME]: 'docx',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/tiff': 'tif',
  'image/webp': 'webp',
};

const TEXT_BY_EXTENSION: Record<string, { mime: string; ext: string }> = {
  txt: { mime: 'text/plain', ext: 'txt' },
  text: { mime: 'text/plain', ext: 'txt' },
  log: { mime: 'text/plain', ext: 'txt' },
  csv: { mime: 'text/csv', ext: 'csv' },
  md: { mime: 'text/markdown', ext: 'md' },
  markdown: { mime: 'text/markdown', ext: 'md' },
  html: { mime: 'text/html', ext: 'html' },
  htm: { mime: 'text/html', ext: 'html' },
};

/**
 * The document's real type from its first bytes, or null when it is not one we accept. Binary
 * formats are recognised by their signature (file-type); text is recognised by being valid UTF-8
 * without NULs, and only then may the filename choose among the text subtypes.
 */
export async function sniffDocumentType(head: Uint8Array, filename?: string): Promise<{ mime: string; ext: string } | null> {
  const bytes = head.subarray(0, SNIFF_BYTES);
  if (bytes.length === 0) return null;
  const detected = await fileTypeFromBuffer(bytes);
  if (detected) {
    // file-type trusts [Content_Types].xml; a DOCX must also hold the main document part, which
    // is what mammoth reads, so a zip merely claiming to be Word is refused.
    if (detected.mime === DOCX_MIME) return hasZipEntry(bytes, 'word/document.xml') ? { mime: DOCX_MIME, ext: 'docx' } : null;
    const ext = BINARY_EXT[detected.mime];
    return ext ? { mime: detected.mime, ext } : null;
  }
  // The head may be a prefix of a longer file, so a character cut at its end is forgiven.
  if (!looksLikeText(bytes)) return null;
  const byName = TEXT_BY_EXTENSION[extensionOf(filename)];
  if (byName) return byName;
  return looksLikeHtml(bytes) ? { mime: 'text/html', ext: 'html' } : { mime: 'text/plain', ext: 'txt' };
}

function extensionOf(filename: string | undefined): string {
  const match = /\.([A-Za-z0-9]+)$/.exec(filename ?? '');
  return match ? match[1].toLowerCase() : '';
}

/** Valid UTF-8 (a sequence cut at the end of a truncated head is forgiven), no NUL, few control characters. */
export function looksLikeText(bytes: Uint8Array, truncated = true): boolean {
  let end = bytes.length;
  if (truncated) {
    // Drop an incomplete multi-byte sequence at the cut: up to 3 continuation bytes after a lead byte.
    let back = 0;
    while (back < 3 && end - back - 1 >= 0 && (bytes[end - back - 1] & 0xc0) === 0x80) back++;
    const lead = bytes[end - back - 1];
    if (lead !== undefined && lead >= 0xc0) {
      const need = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : 1;
      if (back < need) end = end - back - 1;
    }
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, end));
  } catch {
    return false;
  }
  let control = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0) return false;
    // Tab, line feed, form feed and carriage return are text; other C0 controls are a sign of binary.
    if (code < 32 && code !== 9 && code !== 10 && code !== 12 && code !== 13) control++;
  }
  return control <= Math.max(2, text.length / 1000);
}

function looksLikeHtml(bytes: Uint8Array): boolean {
  const start = new TextDecoder().decode(bytes.subarray(0, 1024)).replace(/^\uFEFF/, '').trimStart().toLowerCase();
  return start.startsWith('<!doctype html') || start.startsWith('<html') || (start.startsWith('<') && /<(head|body)[\s>]/.test(start));
}

/** Whether a zip's local or central directory headers within these bytes name the entry. */
function hasZipEntry(bytes: Uint8Array, name: string): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const decoder = new TextDecoder();
  for (let i = 0; i + 46 <= bytes.length; i++) {
    if (bytes[i] !== 0x50 || bytes[i + 1] !== 0x4b) continue;
    let nameAt = -1;
    let nameLength = 0;
    if (bytes[i + 2] === 3 && bytes[i + 3] === 4) {
      nameLength = view.getUint16(i + 26, true);
      nameAt = i + 30;
    } else if (bytes[i + 2] === 1 && bytes[i + 3] === 2) {
      nameLength = view.getUint16(i + 28, true);
      nameAt = i + 46;
    }
    if (nameAt < 0 || nameAt + nameLength > bytes.length) continue;
    if (nameLength === name.length && decoder.decode(bytes.subarray(nameAt, nameAt + nameLength)) === name) return true;
  }
  return false;
}
