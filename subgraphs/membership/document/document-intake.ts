import { sniffDocumentType, SNIFF_BYTES } from '../document-extraction/document-type.js';
import type { DocumentStorage, StoredBlob } from './document-storage.js';
import { DocumentTooLargeError, EmptyDocumentError, UnsupportedDocumentTypeError } from './document.errors.js';

export interface IntakeResult extends StoredBlob {
  mime: string;
  ext: string;
}

/**
 * Takes a file in: reads just enough of `input` to sniff its type from the bytes (refused before
 * anything is stored when off the allowlist), then streams the rest into storage, counting bytes
 * and failing the write (which keeps nothing) the moment the file passes `maxBytes`.
 */
export async function takeIn(input: AsyncIterable<Uint8Array>, filename: string, storage: DocumentStorage, maxBytes: number): Promise<IntakeResult> {
  const iterator = input[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  let done = false;
  while (headBytes < SNIFF_BYTES) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    const piece = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    head.push(piece);
    headBytes += piece.length;
    if (headBytes > maxBytes) throw new DocumentTooLargeError(maxBytes);
  }
  if (headBytes === 0) throw new EmptyDocumentError();
  const first = Buffer.concat(head);
  const type = await sniffDocumentType(first.subarray(0, SNIFF_BYTES), filename);
  if (!type) {
    await iterator.return?.();
    throw new UnsupportedDocumentTypeError();
  }
  async function* all(): AsyncGenerator<Uint8Array> {
    yield first;
    let total = first.length;
    if (done) return;
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      total += next.value.byteLength;
      if (total > maxBytes) {
        await iterator.return?.();
        throw new DocumentTooLargeError(maxBytes);
      }
      yield next.value;
    }
  }
  const stored = await storage.write(all());
  return { ...stored, ...type };
}
