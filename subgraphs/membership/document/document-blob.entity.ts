import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** A stored file's bytes as a whole: its size, hash and number of chunks (postgres-document-storage.ts writes it with raw SQL). */
@Entity({ tableName: 'document_blob' })
export class DocumentBlob {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @Property({ type: 'integer' })
  sizeBytes!: number;

  @Property({ type: 'string', length: 64, columnType: 'char(64)' })
  sha256!: string;

  @Property({ type: 'integer' })
  chunkCount!: number;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt!: Date;
}
