import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DocumentStorage, StoredBlob } from './document-storage.js';

/**
 * Rows of this size keep each statement small and memory flat: a chunk travels to PostgreSQL as a
 * hex string of twice its size, and under V8's large-object size (128 KiB) that garbage dies young
 * instead of piling up in the old generation until a major collection.
 */
export const CHUNK_BYTES = 60 * 1024;
/** Chunks fetched per statement on the way out. */
const CHUNKS_PER_READ = 4;

/**
 * Document bytes in PostgreSQL, as 60 KiB `bytea` rows of `document_blob_chunk`, written in one
 * transaction as they arrive (an upload that breaks off leaves nothing) and read back one row at a
 * time, so neither direction holds more than a chunk of a file in memory.
 */
export class PostgresDocumentStorage implements DocumentStorage {
  constructor(private readonly em: EntityManager) {}

  async write(input: AsyncIterable<Uint8Array>): Promise<StoredBlob> {
    const id = randomUUID();
    const hash = createHash('sha256');
    let size = 0;
    let seq = 0;
    let sha256 = '';
    await this.em.fork().transactional(async (tx) => {
      const insert = (data: Buffer) =>
        tx.execute(`insert into "membership"."document_blob_chunk" ("blob_id", "seq", "data") values (?, ?, ?)`, [id, seq++, data], 'run');
      // The blob row first: the chunks reference it.
      await tx.execute(`insert into "membership"."document_blob" ("id", "size_bytes", "sha256", "chunk_count") values (?, 0, '', 0)`, [id], 'run');
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      for await (const piece of input) {
        const buffer = Buffer.isBuffer(piece) ? piece : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
        hash.update(buffer);
        size += buffer.length;
        pending.push(buffer);
        pendingBytes += buffer.length;
        while (pendingBytes >= CHUNK_BYTES) {
          const joined = Buffer.concat(pending);
          await insert(joined.subarray(0, CHUNK_BYTES));
          const rest = joined.subarray(CHUNK_BYTES);
          pending = rest.length ? [Buffer.from(rest)] : [];
          pendingBytes = rest.length;
        }
      }
      if (pendingBytes > 0 || seq === 0) await insert(Buffer.concat(pending));
      sha256 = hash.digest('hex');
      await tx.execute(`update "membership"."document_blob" set "size_bytes" = ?, "sha256" = ?, "chunk_count" = ? where "id" = ?`, [size, sha256, seq, id], 'run');
    });
    return { ref: id, size, sha256 };
  }

  read(ref: string): Readable {
    const em = this.em.fork();
    async function* chunks(): AsyncGenerator<Buffer> {
      const [blob] = await em.execute<{ chunk_count: number }[]>(`select "chunk_count" from "membership"."document_blob" where "id" = ?`, [ref]);
      if (!blob) throw new Error(`document blob ${ref} is missing`);
      for (let seq = 0; seq < blob.chunk_count; seq += CHUNKS_PER_READ) {
        const rows = await em.execute<{ seq: number; data: Buffer }[]>(
          `select "seq", "data" from "membership"."document_blob_chunk" where "blob_id" = ? and "seq" >= ? and "seq" < ? order by "seq"`,
          [ref, seq, seq + CHUNKS_PER_READ],
        );
        if (rows.length !== Math.min(CHUNKS_PER_READ, blob.chunk_count - seq)) throw new Error(`document blob ${ref} lost chunks from ${seq}`);
        for (const row of rows) if (row.data.length) yield row.data;
      }
    }
    return Readable.from(chunks(), { objectMode: false, highWaterMark: 1 });
  }

  async delete(ref: string): Promise<void> {
    await this.em.fork().execute(`delete from "membership"."document_blob" where "id" = ?`, [ref], 'run');
  }
}
