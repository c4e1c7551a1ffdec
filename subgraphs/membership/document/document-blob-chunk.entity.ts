import { Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DocumentBlob } from './document-blob.entity.js';

/** One 60 KiB piece of a blob, in order (`seq`); stored uncompressed (`storage external`), since files mostly are compressed already. */
@Entity({ tableName: 'document_blob_chunk' })
export class DocumentBlobChunk {
  @ManyToOne(() => DocumentBlob, { primary: true, deleteRule: 'cascade' })
  blob!: DocumentBlob;

  @PrimaryKey({ type: 'integer' })
  seq!: number;

  @Property({ type: 'blob' })
  data!: Buffer;
}
