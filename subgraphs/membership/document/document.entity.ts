import { randomUUID } from 'node:crypto';
import { OptionalProps } from '@mikro-orm/core';
import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { DateTimeResolver } from '../../shared/scalars.js';
import { Directive, Field, Float, ID, Int, ObjectType } from '../../shared/type-graphql.js';
import type { Mode } from '../../../core/principal.js';
import { DocumentStatus } from './document-status.js';

/** Who decided a document's category: the user, or a layer of the classifier. */
export type CategorySource = 'user' | 'rule' | 'classifier' | 'zero-shot';

/** The classification result as stored when the pipeline (or GET classify) last computed it. */
export interface StoredClassification {
  category: string | null;
  confidence: number;
  layer: 'rule' | 'classifier' | 'zero-shot' | 'none';
  runnersUp: { category: string; confidence: number }[];
  categoriesVersion: number;
  computedAt: string;
}

/**
 * An uploaded file and what processing learnt from it. Its bytes live in the document storage
 * (`blobId`), its extracted text in `document_content`; the row itself is the processing queue's
 * entry (status, attempts, nextAttemptAt, lockedUntil, lease). Migration20261123003000Documents
 * creates the table.
 */
@ObjectType({ description: 'An uploaded document: its file, its processing status and its category.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'document' })
@Index({ name: 'document_scope_created_index', properties: ['accountId', 'mode', 'createdAt', 'id'] })
@Index({ name: 'document_scope_sha256_index', properties: ['accountId', 'mode', 'sha256'] })
@Index({ name: 'document_due_index', expression: `create index "document_due_index" on "membership"."document" ("next_attempt_at") where "status" in ('pending', 'processing')` })
@Index({ name: 'document_trash_index', expression: `create index "document_trash_index" on "membership"."document" ("deleted_at") where "deleted_at" is not null` })
@Index({ name: 'document_search_index', expression: `create index "document_search_index" on "membership"."document" using gin ("search")` })
export class Document {
  [OptionalProps]?: 'id' | 'createdAt' | 'livemode' | 'status' | 'attempts' | 'tags' | 'snippet' | 'rank';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: 'string', length: 4 })
  mode!: Mode;

  @Field(() => String, { description: 'Id of the API key that uploaded it.' })
  @Property({ type: 'string', length: 100 })
  keyId!: string;

  @Field(() => ID, { nullable: true, description: 'The member the document belongs to, if any.' })
  @Property({ type: 'uuid', nullable: true })
  memberId?: string | null;

  @Field(() => String, { description: 'The file name as uploaded.' })
  @Property({ type: 'string', length: 255 })
  filename!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 300, nullable: true })
  title?: string | null;

  @Field(() => String, { description: 'The type sniffed from the bytes, never the client’s claim.' })
  @Property({ type: 'string', length: 100 })
  mimeType!: string;

  @Property({ type: 'string', length: 10 })
  extension!: string;

  @Field(() => Int)
  @Property({ type: 'integer' })
  sizeBytes!: number;

  @Field(() => String, { description: 'SHA-256 of the bytes, hex.' })
  @Property({ type: 'string', length: 64, columnType: 'char(64)' })
  sha256!: string;

  @Property({ type: 'uuid' })
  blobId!: string;

  @Field(() => [String])
  @Property({ type: 'text[]', defaultRaw: `'{}'` })
  tags: string[] = [];

  /** The full-text vector the worker writes (title A, text B); read only by search's SQL, never loaded. */
  @Property({ type: 'string', columnType: 'tsvector', nullable: true, lazy: true })
  search?: string | null;

  @Field(() => DocumentStatus)
  @Property({ type: 'string', length: 10 })
  status: DocumentStatus = DocumentStatus.PENDING;

  @Field(() => String, { nullable: true, description: 'Why processing failed: encrypted, corrupt, unsupported, empty, timeout or error.' })
  @Property({ type: 'string', length: 20, nullable: true })
  failureReason?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 500, nullable: true })
  failureDetail?: string | null;

  @Field(() => Int, { description: 'Processing attempts so far.' })
  @Property({ type: 'integer' })
  attempts: number = 0;

  @Property({ type: 'datetime', nullable: true })
  nextAttemptAt?: Date | null;

  @Property({ type: 'datetime', nullable: true })
  lockedUntil?: Date | null;

  @Property({ type: 'uuid', nullable: true })
  lease?: string | null;

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  pageCount?: number | null;

  @Field(() => String, { nullable: true, description: 'ISO 639-3 code of the detected language.' })
  @Property({ type: 'string', length: 10, nullable: true })
  language?: string | null;

  @Field(() => String, { nullable: true, description: 'text-layer, ocr, mixed or plain.' })
  @Property({ type: 'string', length: 12, nullable: true })
  extractionMethod?: string | null;

  @Field(() => Float, { nullable: true, description: 'Mean OCR confidence, 0 to 1; null without OCR.' })
  @Property({ type: 'float', columnType: 'real', nullable: true })
  extractionConfidence?: number | null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'string', length: 100, nullable: true })
  category?: string | null;

  @Field(() => String, { nullable: true, description: 'user, rule, classifier or zero-shot.' })
  @Property({ type: 'string', length: 10, nullable: true })
  categorySource?: CategorySource | null;

  @Property({ type: 'json', nullable: true })
  classification?: StoredClassification | null;

  @Property({ type: 'integer', nullable: true })
  categoriesVersion?: number | null;

  @Field(() => DateTimeResolver)
  @Property({ type: 'datetime' })
  createdAt: Date = new Date();

  @Field(() => DateTimeResolver, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  processedAt?: Date | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'When it was moved to the trash; null unless trashed.' })
  @Property({ type: 'datetime', nullable: true })
  deletedAt?: Date | null;

  /** Set on the items of a search (`q`): the best passages, matches in <mark>; not stored. */
  @Field(() => String, { nullable: true, description: 'With q: matching passages of the text, matches between <mark> and </mark>.' })
  snippet?: string | null;

  /** Set on the items of a search (`q`): ts_rank of the match; not stored. */
  @Field(() => Float, { nullable: true, description: 'With q: how well the document matches (ts_rank, title weighted above text).' })
  rank?: number | null;

  @Field(() => Boolean)
  get livemode(): boolean {
    return this.mode === 'live';
  }
}
