import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/** A staged upload (the first step of the two-step upload): its bytes, once sent, until a document takes them or it expires. */
@Entity({ tableName: 'document_upload' })
@Index({ name: 'document_upload_expires_index', properties: ['expiresAt'] })
export class DocumentUpload {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: string;

  @Property({ type: 'string', length: 100 })
  keyId!: string;

  @Property({ type: 'uuid', nullable: true })
  blobId?: string | null;

  @Property({ type: 'string', length: 255, nullable: true })
  filename?: string | null;

  @Property({ type: 'string', length: 100, nullable: true })
  mimeType?: string | null;

  @Property({ type: 'string', length: 10, nullable: true })
  extension?: string | null;

  @Property({ type: 'integer', nullable: true })
  sizeBytes?: number | null;

  @Property({ type: 'string', length: 64, columnType: 'char(64)', nullable: true })
  sha256?: string | null;

  @Property({ type: 'datetime' })
  createdAt!: Date;

  @Property({ type: 'datetime' })
  expiresAt!: Date;
}
