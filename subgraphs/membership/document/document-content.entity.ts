import { Entity, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Document } from './document.entity.js';

/** A document's extracted text, pages and key fields, apart from its metadata so that lists never read text. */
@Entity({ tableName: 'document_content' })
export class DocumentContent {
  // One per document: the document's id is this row's key.
  @ManyToOne(() => Document, { primary: true, deleteRule: 'cascade' })
  document!: Document;

  @Property({ type: 'text' })
  text!: string;

  @Property({ type: 'json' })
  pages!: unknown;

  @Property({ type: 'json' })
  keyFields!: unknown;
}
