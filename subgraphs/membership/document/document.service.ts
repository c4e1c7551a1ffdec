import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FilterQuery } from '@mikro-orm/core';
import type { Principal } from '../../../core/principal.js';
import { cursorParts, encodeCursor } from '../../shared/cursor.js';
import { DEFAULT_PAGE_SIZE, InvalidCursorError, paginate, UUID, type Page } from '../../shared/pagination.js';
import { NotFoundError } from '../../shared/not-found.error.js';
import { AuditService } from '../audit/audit.service.js';
import { MemberService } from '../member/member.service.js';
import { MemberArgumentNotFoundError } from '../member/member.errors.js';
import { Document, type CategorySource, type StoredClassification } from './document.entity.js';
import { DocumentStatus } from './document-status.js';
import type { DocumentStorage } from './document-storage.js';
import type { DocumentSettings } from './document-settings.js';
import type { DocumentClassifier, ExtractedPageData, KeyFieldData } from './document-pipeline.js';
import type { CreateDocumentArgs, DocumentDetailsArgs, DocumentsArgs, UpdateDocumentArgs, UploadDocumentBase64Args } from './document.inputs.js';
import type { DocumentExtraction } from './document-extraction.type.js';
import type { DocumentClassification } from './document-classification.type.js';
import type { DocumentUploadTicket } from './document-upload-ticket.type.js';
import { takeIn, type IntakeResult } from './document-intake.js';
import { DOCUMENT_QUEUED, documentQueueSignal } from './document-queue-signal.js';
import {
  DocumentDuplicateError,
  DocumentNotTrashedError,
  DocumentTooLargeError,
  DocumentUploadIncompleteError,
  DocumentUploadNotFoundError,
  InvalidDocumentContentError,
  UnknownDocumentCategoryError,
} from './document.errors.js';
import { storedFilename } from '../../../core/document-filename.js';

/** A staged upload lives this long between its bytes and createDocument. */
export const UPLOAD_TTL_MS = 60 * 60 * 1000;

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;

interface UploadRow {
  id: string;
  blob_id: string | null;
  filename: string | null;
  mime_type: string | null;
  extension: string | null;
  size_bytes: number | null;
  sha256: string | null;
}

/** What a staged upload answers: its id and what the bytes turned out to be. */
export interface StagedUpload {
  uploadId: string;
  sizeBytes: number;
  sha256: string;
  mimeType: string;
}

/** Documents of the principal's account and mode: intake, listing and search, trash, category. */
export class DocumentService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
    private readonly settings: DocumentSettings,
    private readonly storage: DocumentStorage,
    private readonly classifier?: DocumentClassifier,
  ) {}

  private get scope() {
    return { accountId: this.principal.accountId, mode: this.principal.mode };
  }

  async find(id: string): Promise<Document | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Document, { id, ...this.scope });
  }

  async get(id: string): Promise<Document> {
    const document = await this.find(id);
    if (!document) throw new NotFoundError('document', id);
    return document;
  }

  /** Many documents in one statement, in the order of `ids` (null where not visible). */
  async findMany(ids: readonly string[]): Promise<(Document | null)[]> {
    const valid = ids.filter((id) => UUID.test(id));
    const rows = valid.length ? await this.em.find(Document, { id: { $in: valid }, ...this.scope }) : [];
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  list(args: DocumentsArgs): Promise<Page<Document>> {
    if (args.q?.trim()) return this.search(args);
    const where: FilterQuery<Document>[] = [{ ...this.scope, deletedAt: args.trashed ? { $ne: null } : null }];
    if (args.category) where.push({ category: args.category });
    if (args.tag) where.push({ tags: { $contains: [args.tag.trim().toLowerCase()] } } as FilterQuery<Document>);
    if (args.memberId) where.push({ memberId: args.memberId });
    if (args.mimeType) where.push({ mimeType: args.mimeType });
    if (args.status) where.push({ status: args.status });
    if (args.createdFrom) where.push({ createdAt: { $gte: args.createdFrom } });
    if (args.createdTo) where.push({ createdAt: { $lt: args.createdTo } });
    return paginate(this.em, Document, where, args);
  }

  /**
   * Full-text search, best match first (ts_rank over the title, weight A, and the text, weight B),
   * keyset-paged on (rank, id). Snippets (ts_headline) are made for the page's rows only.
   */
  private async search(args: DocumentsArgs): Promise<Page<Document>> {
    const limit = args.limit ?? DEFAULT_PAGE_SIZE;
    const conditions = [`d."account_id" = ?`, `d."mode" = ?`, args.trashed ? `d."deleted_at" is not null` : `d."deleted_at" is null`, `d."search" @@ q.query`];
    const params: unknown[] = [args.q!.trim(), this.scope.accountId, this.scope.mode];
    const add = (sql: string, value: unknown) => {
      conditions.push(sql);
      params.push(value);
    };
    if (args.category) add(`d."category" = ?`, args.category);
    if (args.tag) add(`? = any(d."tags")`, args.tag.trim().toLowerCase());
    if (args.memberId) add(`d."member_id" = ?`, args.memberId);
    if (args.mimeType) add(`d."mime_type" = ?`, args.mimeType);
    if (args.status) add(`d."status" = ?`, args.status);
    if (args.createdFrom) add(`d."created_at" >= ?`, args.createdFrom);
    if (args.createdTo) add(`d."created_at" < ?`, args.createdTo);
    if (args.after) {
      const [rank, id] = decodeRankCursor(args.after);
      conditions.push(`(ts_rank(d."search", q.query), d."id") < (?::real, ?::uuid)`);
      params.push(rank, id);
    }
    params.push(limit + 1);
    const rows = await this.em.execute<{ id: string; rank: number; snippet: string }[]>(
      `select hit."id", hit."rank", ts_headline('english', left(c."text", 100000), hit.query,
              'MaxFragments=2, MinWords=5, MaxWords=20, FragmentDelimiter=" … ", StartSel=<mark>, StopSel=</mark>') as "snippet"
       from (select d."id", ts_rank(d."search", q.query) as "rank", q.query
             from "membership"."document" d, websearch_to_tsquery('english', ?) as q(query)
             where ${conditions.join(' and ')}
             order by "rank" desc, d."id" desc limit ?) hit
       left join "membership"."document_content" c on c."document_id" = hit."id"
       order by hit."rank" desc, hit."id" desc`,
      params,
    );
    const page = rows.slice(0, limit);
    const documents = await this.findMany(page.map((row) => row.id));
    const data = page.flatMap((row, index) => {
      const document = documents[index];
      if (!document) return [];
      document.rank = Number(row.rank);
      document.snippet = row.snippet ?? null;
      return [document];
    });
    const hasMore = rows.length > limit;
    const last = page[page.length - 1];
    return { data, hasMore, nextCursor: hasMore && last ? encodeRankCursor(Number(last.rank), last.id) : null };
  }

  /** Step 1 of the GraphQL upload: a staged upload the bytes are PUT to. */
  async createUpload(given: string): Promise<DocumentUploadTicket> {
    const filename = storedFilename(given);
    const id = randomUUID();
    const now = new Date();
    const expiresAt = new Date(now.getTime() + UPLOAD_TTL_MS);
    await this.em.execute(
      `insert into "membership"."document_upload" ("id", "account_id", "mode", "key_id", "filename", "created_at", "expires_at") values (?, ?, ?, ?, ?, ?, ?)`,
      [id, this.scope.accountId, this.scope.mode, this.principal.keyId, filename, now, expiresAt],
      'run',
    );
    return { uploadId: id, uploadPath: `/documents/uploads/${id}`, method: 'PUT', maxBytes: this.settings.maxUploadBytes, expiresAt };
  }

  /**
   * Streams a file into storage as a staged upload: a new one (the REST upload) or the one
   * `uploadId` names (the PUT of the GraphQL two-step). Nothing is a document until createDocument.
   */
  async stage(input: AsyncIterable<Uint8Array>, filename: string, uploadId?: string): Promise<StagedUpload> {
    let given = filename;
    if (uploadId) {
      const row = await this.uploadRow(uploadId);
      if (row.blob_id) throw new DocumentUploadNotFoundError(uploadId);
      given = row.filename ?? filename;
    }
    // Where the name is kept: one rule for every way a file arrives, checked before a byte is read.
    const name = storedFilename(given);
    const stored = await takeIn(input, name, this.storage, this.settings.maxUploadBytes);
    return this.recordStaged(stored, name, uploadId);
  }

  private async recordStaged(stored: IntakeResult, filename: string, uploadId?: string): Promise<StagedUpload> {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + UPLOAD_TTL_MS);
    const values = [stored.ref, filename, stored.mime, stored.ext, stored.size, stored.sha256];
    if (uploadId) {
      // Only a ticket still without bytes takes them: two PUTs racing store one file.
      const updated = await this.em.execute<{ id: string }[]>(
        `update "membership"."document_upload" set "blob_id" = ?, "filename" = ?, "mime_type" = ?, "extension" = ?, "size_bytes" = ?, "sha256" = ?
         where "id" = ? and "account_id" = ? and "mode" = ? and "blob_id" is null and "expires_at" > now() returning "id"`,
        [...values, uploadId, this.scope.accountId, this.scope.mode],
      );
      if (!updated.length) {
        await this.storage.delete(stored.ref);
        throw new DocumentUploadNotFoundError(uploadId);
      }
    } else {
      uploadId = randomUUID();
      await this.em.execute(
        `insert into "membership"."document_upload" ("blob_id", "filename", "mime_type", "extension", "size_bytes", "sha256", "id", "account_id", "mode", "key_id", "created_at", "expires_at")
         values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [...values, uploadId, this.scope.accountId, this.scope.mode, this.principal.keyId, now, expiresAt],
        'run',
      );
    }
    return { uploadId, sizeBytes: stored.size, sha256: stored.sha256, mimeType: stored.mime };
  }

  private async uploadRow(uploadId: string): Promise<UploadRow> {
    if (!UUID.test(uploadId)) throw new DocumentUploadNotFoundError(uploadId);
    const [row] = await this.em.execute<UploadRow[]>(
      `select "id", "blob_id", "filename", "mime_type", "extension", "size_bytes", "sha256" from "membership"."document_upload"
       where "id" = ? and "account_id" = ? and "mode" = ? and "expires_at" > now()`,
      [uploadId, this.scope.accountId, this.scope.mode],
    );
    if (!row) throw new DocumentUploadNotFoundError(uploadId);
    return row;
  }

  /**
   * Step 2: the staged bytes become a document, PENDING, which the workers pick up once this
   * commits. The same bytes already filed in this account and mode (outside the trash) are 409
   * with that document's id, unless duplicates are allowed; an advisory lock on the hash makes
   * two concurrent uploads of one file meet here one after the other.
   */
  async createDocument(args: CreateDocumentArgs): Promise<Document> {
    const upload = await this.uploadRow(args.uploadId);
    if (!upload.blob_id) throw new DocumentUploadIncompleteError(args.uploadId);
    const category = args.category ? await this.checkCategory(args.category) : null;
    if (args.memberId && !(await new MemberService(this.em, this.principal).find(args.memberId))) throw new MemberArgumentNotFoundError(args.memberId, 'memberId');
    const document = await this.em.transactional(async (tx) => {
      const sha256 = upload.sha256!.trim();
      await tx.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`document:${this.scope.accountId}:${this.scope.mode}:${sha256}`]);
      if (!this.settings.allowDuplicates) {
        const existing = await tx.findOne(Document, { ...this.scope, sha256, deletedAt: null }, { fields: ['id'] });
        if (existing) throw new DocumentDuplicateError(existing.id);
      }
      const consumed = await tx.execute<{ id: string }[]>(`delete from "membership"."document_upload" where "id" = ? and "blob_id" is not null returning "id"`, [upload.id]);
      if (!consumed.length) throw new DocumentUploadNotFoundError(args.uploadId);
      const document = tx.create(Document, {
        ...this.scope,
        keyId: this.principal.keyId,
        memberId: args.memberId ?? null,
        filename: upload.filename ?? 'upload',
        title: args.title?.trim() || null,
        mimeType: upload.mime_type!,
        extension: upload.extension!,
        sizeBytes: Number(upload.size_bytes),
        sha256,
        blobId: upload.blob_id!,
        tags: normalizeTags(args.tags),
        category,
        categorySource: category ? 'user' : null,
        nextAttemptAt: new Date(),
      });
      tx.persist(document);
      await tx.flush();
      return document;
    });
    documentQueueSignal.emit(DOCUMENT_QUEUED);
    return document;
  }

  /** The small-file GraphQL path: base64 in the mutation, the same checks as a streamed upload. */
  async uploadBase64(args: UploadDocumentBase64Args): Promise<Document> {
    if (!BASE64.test(args.content)) throw new InvalidDocumentContentError();
    if (Math.floor((args.content.length * 3) / 4) - 2 > this.settings.maxUploadBytes) throw new DocumentTooLargeError(this.settings.maxUploadBytes);
    const bytes = Buffer.from(args.content, 'base64');
    const staged = await this.stage(Readable.from([bytes]), args.filename);
    return this.createDocument({ ...args, uploadId: staged.uploadId } as CreateDocumentArgs);
  }

  /** The extracted text, or just the status while there is none. */
  async extraction(id: string): Promise<DocumentExtraction> {
    const document = await this.get(id);
    const base = { id: document.id, status: document.status, failureReason: document.failureReason ?? null };
    const empty = { pages: null, text: null, pageCount: null, method: null, confidence: null, language: null, keyFields: null };
    if (document.status !== DocumentStatus.READY) return { ...base, ...empty };
    const [content] = await this.em.execute<{ text: string; pages: ExtractedPageData[]; key_fields: KeyFieldData[] }[]>(
      `select "text", "pages", "key_fields" from "membership"."document_content" where "document_id" = ?`,
      [document.id],
    );
    return {
      ...base,
      pages: content?.pages ?? [],
      text: content?.text ?? '',
      pageCount: document.pageCount ?? null,
      method: document.extractionMethod ?? null,
      confidence: document.extractionConfidence ?? null,
      language: document.language ?? null,
      keyFields: (content?.key_fields ?? []).map((field) => ({ ...field, currency: field.currency ?? null })),
    };
  }

  /**
   * The stored classification, computed again first when the account's categories or rules
   * changed since (their version moved), so the answer follows the edit without a re-upload.
   */
  async classification(id: string): Promise<DocumentClassification> {
    const document = await this.get(id);
    if (document.status === DocumentStatus.READY && this.classifier) {
      const version = await this.classifier.categoriesVersion(this.em, this.scope);
      if (document.categoriesVersion !== version) await this.reclassify(document);
    }
    return classificationView(document);
  }

  private async reclassify(document: Document): Promise<void> {
    const [content] = await this.em.execute<{ text: string }[]>(`select "text" from "membership"."document_content" where "document_id" = ?`, [document.id]);
    const result = await this.classifier!.classify(this.em, this.scope, { text: content?.text ?? '', title: document.title ?? null, filename: document.filename });
    Object.assign(document, classificationFields(document, result));
    await this.em.flush();
  }

  /** A user's correction: kept as the category (source user) and fed to the next training, which the worker runs. */
  async setCategory(id: string, category: string): Promise<Document> {
    const document = await this.get(id);
    document.category = await this.checkCategory(category);
    document.categorySource = 'user';
    await this.em.flush();
    await requestTraining(this.em, this.scope);
    return document;
  }

  /** The account's category of that name (case and spacing aside), as the account spells it. */
  private async checkCategory(category: string): Promise<string> {
    if (!this.classifier) return category.trim();
    const wanted = category.trim().replace(/\s+/g, ' ').toLowerCase();
    const known = (await this.classifier.categories(this.em, this.scope)).find((candidate) => candidate.name.toLowerCase() === wanted);
    if (!known) throw new UnknownDocumentCategoryError(category);
    return known.name;
  }

  /** A new title or tags; a processed document's search follows its new title at once. */
  async update(args: UpdateDocumentArgs): Promise<Document> {
    const document = await this.get(args.id);
    const before = { title: document.title ?? null, tags: document.tags };
    if (args.title !== undefined) document.title = args.title?.trim() || null;
    if (args.tags != null) document.tags = normalizeTags(args.tags);
    new AuditService(this.em, this.principal).record('document', document.id, 'updated', before, { title: document.title ?? null, tags: document.tags });
    await this.em.flush();
    // The title is the search's weight-A part (document.worker.ts); its text part (B) stays.
    if (args.title !== undefined) {
      await this.em.execute(
        `update "membership"."document" set "search" = setweight(to_tsvector('english', coalesce("title", '') || ' ' || "filename"), 'A') || ts_filter("search", '{b}') where "id" = ? and "search" is not null`,
        [document.id],
        'run',
      );
    }
    return document;
  }

  /** To the trash: hidden from lists, restorable for the retention days, then purged by the worker. */
  async trash(id: string): Promise<Document> {
    const document = await this.get(id);
    if (!document.deletedAt) {
      document.deletedAt = new Date();
      new AuditService(this.em, this.principal).record('document', document.id, 'trashed', { deletedAt: null }, { deletedAt: document.deletedAt });
      await this.em.flush();
    }
    return document;
  }

  async restore(id: string): Promise<Document> {
    const document = await this.get(id);
    if (!document.deletedAt) throw new DocumentNotTrashedError(id);
    new AuditService(this.em, this.principal).record('document', document.id, 'restored', { deletedAt: document.deletedAt }, { deletedAt: null });
    document.deletedAt = null;
    await this.em.flush();
    return document;
  }

  /** When a trashed document will be purged. */
  purgeAt(document: Document): Date | null {
    return document.deletedAt ? new Date(document.deletedAt.getTime() + this.settings.trashRetentionDays * 86_400_000) : null;
  }
}

/** Marks the account's classifier for training; the worker trains once per burst of label changes. */
export async function requestTraining(em: EntityManager, scope: { accountId: string; mode: string }): Promise<void> {
  await em.execute(
    `insert into "membership"."document_training_request" ("account_id", "mode", "requested_at") values (?, ?, now())
     on conflict ("account_id", "mode") do update set "requested_at" = excluded."requested_at"`,
    [scope.accountId, scope.mode],
    'run',
  );
}

/** The document columns a classifier answer sets; a user's category is kept, the answer stored beside it. */
export function classificationFields(
  current: Pick<Document, 'category' | 'categorySource'>,
  result: Omit<StoredClassification, 'computedAt'>,
): Pick<Document, 'classification' | 'categoriesVersion' | 'category' | 'categorySource'> {
  const classification = { ...result, computedAt: new Date().toISOString() };
  if (current.categorySource === 'user') return { classification, categoriesVersion: result.categoriesVersion, category: current.category, categorySource: 'user' };
  const decided = result.layer !== 'none' && result.category !== null;
  return { classification, categoriesVersion: result.categoriesVersion, category: decided ? result.category : null, categorySource: decided ? (result.layer as CategorySource) : null };
}

function classificationView(document: Document): DocumentClassification {
  const stored = document.classification;
  return {
    id: document.id,
    status: document.status,
    category: document.category ?? null,
    source: document.categorySource ?? null,
    suggested: stored?.category ?? null,
    confidence: stored?.confidence ?? null,
    layer: stored?.layer ?? null,
    runnersUp: stored?.runnersUp ?? [],
    categoriesVersion: stored?.categoriesVersion ?? null,
    computedAt: stored ? new Date(stored.computedAt) : null,
  };
}

function normalizeTags(tags: DocumentDetailsArgs['tags']): string[] {
  return [...new Set((tags ?? []).map((tag) => tag.trim().toLowerCase()).filter(Boolean))];
}

function encodeRankCursor(rank: number, id: string): string {
  return encodeCursor(['rank', rank, id]);
}

function decodeRankCursor(cursor: string): [number, string] {
  const [kind, rank, id, extra] = cursorParts(cursor) ?? [];
  if (kind !== 'rank' || extra !== undefined || typeof rank !== 'number' || !Number.isFinite(rank) || typeof id !== 'string' || !UUID.test(id)) throw new InvalidCursorError();
  return [rank, id];
}
