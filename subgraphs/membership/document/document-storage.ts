import type { Readable } from 'node:stream';

/** What storing a file produced: where to find it again, its length and its SHA-256 (hex). */
export interface StoredBlob {
  ref: string;
  size: number;
  sha256: string;
}

/**
 * Where document bytes live. PostgreSQL (PostgresDocumentStorage) by default; an S3-compatible
 * store would implement the same three calls (a multipart upload hashing as it goes, a GetObject
 * stream, a DeleteObject) and be passed to the subgraph instead.
 */
export interface DocumentStorage {
  /** Streams `input` in, computing size and SHA-256 on the way; rejects (and keeps nothing) if the stream errors. */
  write(input: AsyncIterable<Uint8Array>): Promise<StoredBlob>;
  /** The bytes, streamed; errors with DocumentBlobMissingError when `ref` is unknown. */
  read(ref: string): Readable;
  /** Removes the bytes; unknown refs are ignored. */
  delete(ref: string): Promise<void>;
}
