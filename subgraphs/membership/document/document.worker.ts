import { randomUUID } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { AuditService } from '../audit/audit.service.js';
import type { Mode } from '../../../core/principal.js';
import { Document } from './document.entity.js';
import { DocumentStatus } from './document-status.js';
import { DEFAULT_DOCUMENT_SETTINGS, type DocumentSettings } from './document-settings.js';
import type { DocumentStorage } from './document-storage.js';
import type { DocumentClassifier, DocumentTextExtractor, ExtractionData } from './document-pipeline.js';
import { classificationFields, requestTraining } from './document.service.js';
import { PostgresDocumentStorage } from './postgres-document-storage.js';
import { DOCUMENT_QUEUED, documentQueueSignal } from './document-queue-signal.js';

const SECOND = 1000;
const HOUSEKEEPING_INTERVAL_MS = 5 * SECOND;

/** Wait before retry n (1-based): 5 s, 20 s, 80 s… capped at 10 minutes. */
export function defaultBackoffMs(attempt: number): number {
  return Math.min(5 * SECOND * 4 ** (attempt - 1), 10 * 60 * SECOND);
}

/** The key id the audit trail shows for what the worker does on its own (purges). */
export const WORKER_KEY_ID = 'system:document-worker';

export interface DocumentWorkerOptions {
  settings?: DocumentSettings;
  extractor: DocumentTextExtractor;
  classifier?: DocumentClassifier;
  storage?: (em: EntityManager) => DocumentStorage;
  backoffMs?: (attempt: number) => number;
  pollIntervalMs?: number;
  /** A label change waits this long for others before the account's classifier is trained. */
  trainingDebounceMs?: number;
  logger?: Logger;
}

/** Why an attempt failed, and whether trying again could help. */
interface Failure {
  reason: string;
  detail: string;
  permanent: boolean;
}

class TimeLimitError extends Error {}

/**
 * Processes documents from the durable queue that is the `document` table. Each poll claims due
 * documents with `FOR UPDATE SKIP LOCKED`, marking them processing with a lease (a fresh token and
 * a `locked_until` past the time limit) in the same statement, so instances share the work and
 * no document is processed twice at once; a worker that dies only delays its documents until the
 * lease runs out. Results are written only under the lease the worker holds. The same loop purges
 * the trash past its retention (audited), staged uploads never used, and trains classifiers whose
 * labels changed.
 */
export class DocumentWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private lastHousekeeping = 0;
  private waiting = false;
  private wake: (() => void) | undefined;
  private readonly settings: DocumentSettings;
  private readonly storage: (em: EntityManager) => DocumentStorage;
  private readonly backoffMs: (attempt: number) => number;
  private readonly pollIntervalMs: number;

  constructor(
    private readonly orm: MikroORM,
    private readonly options: DocumentWorkerOptions,
  ) {
    this.settings = options.settings ?? DEFAULT_DOCUMENT_SETTINGS;
    this.storage = options.storage ?? ((em) => new PostgresDocumentStorage(em));
    this.backoffMs = options.backoffMs ?? defaultBackoffMs;
    this.pollIntervalMs = options.pollIntervalMs ?? SECOND;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const tick = () => {
      this.running = this.runOnce()
        .then(async (processed) => {
          // Purges and training are not urgent: at most every few seconds, not after every document.
          if (Date.now() - this.lastHousekeeping >= HOUSEKEEPING_INTERVAL_MS) {
            this.lastHousekeeping = Date.now();
            await this.housekeeping();
          }
          return processed;
        })
        .catch((error) => this.options.logger?.error({ err: error }, 'document worker poll failed'))
        .then((processed) => {
          if (this.stopped) return;
          // A full batch suggests more are waiting: poll again at once.
          this.waiting = true;
          this.timer = setTimeout(() => {
            this.waiting = false;
            tick();
          }, processed && processed >= this.settings.workers ? 0 : this.pollIntervalMs);
        });
    };
    // A document filed in this process wakes an idle worker instead of waiting for the poll.
    this.wake = () => {
      if (this.stopped || !this.waiting) return;
      clearTimeout(this.timer);
      this.waiting = false;
      tick();
    };
    documentQueueSignal.on(DOCUMENT_QUEUED, this.wake);
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.wake) documentQueueSignal.off(DOCUMENT_QUEUED, this.wake);
    clearTimeout(this.timer);
    await this.running;
  }

  /** Claims up to DOCUMENT_WORKERS due documents and processes them; returns how many. */
  async runOnce(): Promise<number> {
    const lease = randomUUID();
    const leaseMs = this.settings.timeLimitMs + 30 * SECOND;
    const claimed = await this.orm.em.fork().execute<{ id: string }[]>(
      `update "membership"."document" set "status" = 'processing', "attempts" = "attempts" + 1, "lease" = ?,
              "locked_until" = now() + (? * interval '1 millisecond')
       where "id" in (
         select "id" from "membership"."document"
         where "deleted_at" is null and (("status" = 'pending' and "next_attempt_at" <= now()) or ("status" = 'processing' and "locked_until" < now()))
         order by "next_attempt_at" limit ? for update skip locked)
       returning "id"`,
      [lease, leaseMs, this.settings.workers],
    );
    await Promise.all(claimed.map(({ id }) => this.process(id, lease)));
    return claimed.length;
  }

  /** Purges, stale uploads and training: cheap statements when there is nothing to do. */
  async housekeeping(): Promise<void> {
    await this.purgeTrash();
    await this.purgeStaleUploads();
    await this.train();
  }

  private async process(id: string, lease: string): Promise<void> {
    const em = this.orm.em.fork();
    const document = await em.findOne(Document, { id, lease });
    if (!document) return;
    try {
      const bytes = await this.bytesOf(em, document.blobId);
      const extraction = await this.withinLimit((signal) => this.options.extractor.extract(bytes, document.mimeType, signal));
      await this.finish(em, document, lease, extraction);
    } catch (error) {
      await this.fail(em, document, lease, failureOf(error, this.settings.timeLimitMs));
    }
  }

  private async bytesOf(em: EntityManager, blobId: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this.storage(em).read(blobId)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** Aborts the attempt at the time limit, also when the extractor does not heed its signal. */
  private async withinLimit<T>(run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort(new TimeLimitError());
        reject(new TimeLimitError());
      }, this.settings.timeLimitMs);
    });
    try {
      return await Promise.race([run(controller.signal), limit]);
    } catch (error) {
      // An extractor that heeds the signal rejects with its own error first: the limit is the cause.
      if (controller.signal.aborted) throw new TimeLimitError();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async finish(em: EntityManager, document: Document, lease: string, extraction: ExtractionData): Promise<void> {
    const scope = { accountId: document.accountId, mode: document.mode };
    let fields: ReturnType<typeof classificationFields> | null = null;
    if (this.options.classifier) {
      try {
        const result = await this.options.classifier.classify(em, scope, { text: extraction.text, title: document.title ?? null, filename: document.filename });
        fields = classificationFields(document, result);
      } catch (error) {
        // The text is what the document is for; a category can still be computed on GET classify.
        this.options.logger?.warn({ err: error, documentId: document.id }, 'document classification failed');
      }
    }
    const text = extraction.text.replace(/\u0000/g, '');
    const written = await em.transactional(async (tx) => {
      const updated = await tx.execute<{ id: string }[]>(
        `update "membership"."document" set "status" = 'ready', "processed_at" = now(), "lease" = null, "locked_until" = null, "next_attempt_at" = null,
                "failure_reason" = null, "failure_detail" = null, "page_count" = ?, "language" = ?, "extraction_method" = ?, "extraction_confidence" = ?,
                "category" = case when "category_source" = 'user' or ?::boolean then "category" else ? end,
                "category_source" = case when "category_source" = 'user' or ?::boolean then "category_source" else ? end,
                "classification" = coalesce(?::jsonb, "classification"), "categories_version" = coalesce(?, "categories_version"),
                "search" = setweight(to_tsvector('english', coalesce("title", '') || ' ' || "filename"), 'A') || setweight(to_tsvector('english', ?), 'B')
         where "id" = ? and "lease" = ? returning "id"`,
        [
          extraction.pageCount,
          extraction.language,
          extraction.method,
          extraction.confidence,
          fields === null,
          fields?.category ?? null,
          fields === null,
          fields?.categorySource ?? null,
          fields ? JSON.stringify(fields.classification) : null,
          fields?.categoriesVersion ?? null,
          // A tsvector holds at most 1 MiB: the first 500,000 characters are what is searched.
          text.slice(0, 500_000),
          document.id,
          lease,
        ],
      );
      if (!updated.length) return false;
      await tx.execute(
        `insert into "membership"."document_content" ("document_id", "text", "pages", "key_fields") values (?, ?, ?, ?)
         on conflict ("document_id") do update set "text" = excluded."text", "pages" = excluded."pages", "key_fields" = excluded."key_fields"`,
        [document.id, text, JSON.stringify(extraction.pages.map((page) => ({ ...page, text: page.text.replace(/\u0000/g, '') }))), JSON.stringify(extraction.keyFields)],
        'run',
      );
      return true;
    });
    // A document the user labelled is a training example once its text exists.
    if (written && document.categorySource === 'user') await requestTraining(em, scope);
  }

  private async fail(em: EntityManager, document: Document, lease: string, failure: Failure): Promise<void> {
    const last = failure.permanent || document.attempts > this.settings.retries;
    this.options.logger?.info({ documentId: document.id, attempt: document.attempts, reason: failure.reason, last }, 'document processing failed');
    await em.execute(
      `update "membership"."document" set "status" = ?, "failure_reason" = ?, "failure_detail" = ?, "lease" = null, "locked_until" = null,
              "next_attempt_at" = ?, "processed_at" = ?
       where "id" = ? and "lease" = ?`,
      [
        last ? DocumentStatus.FAILED : DocumentStatus.PENDING,
        failure.reason,
        failure.detail.slice(0, 500),
        last ? null : new Date(Date.now() + this.backoffMs(document.attempts)),
        last ? new Date() : null,
        document.id,
        lease,
      ],
      'run',
    );
  }

  /** Trashed documents past the retention: rows, text and bytes removed, each purge in the audit trail. */
  async purgeTrash(batch = 100): Promise<number> {
    const em = this.orm.em.fork();
    const purged = await em.transactional(async (tx) => {
      const rows = await tx.execute<{ id: string; account_id: string; mode: Mode; blob_id: string; filename: string; sha256: string; deleted_at: Date }[]>(
        `select "id", "account_id", "mode", "blob_id", "filename", "sha256", "deleted_at" from "membership"."document"
         where "deleted_at" < now() - (? * interval '1 day') order by "deleted_at" limit ? for update skip locked`,
        [this.settings.trashRetentionDays, batch],
      );
      if (!rows.length) return [];
      for (const row of rows) {
        const principal = { accountId: row.account_id, account: '', keyId: WORKER_KEY_ID, kind: row.mode, mode: row.mode };
        new AuditService(tx, principal).record('document', row.id, 'purged', { filename: row.filename, sha256: row.sha256.trim(), deletedAt: row.deleted_at }, null);
      }
      await tx.flush();
      await tx.execute(`delete from "membership"."document" where "id" in (${rows.map(() => '?').join(', ')})`, rows.map((row) => row.id), 'run');
      return rows;
    });
    // After the commit: a crash in between leaves bytes no row names, never a row without bytes.
    const storage = this.storage(em);
    for (const row of purged) await storage.delete(row.blob_id);
    return purged.length;
  }

  /** Staged uploads past their hour that never became documents, and their bytes. */
  async purgeStaleUploads(): Promise<number> {
    const em = this.orm.em.fork();
    const rows = await em.execute<{ blob_id: string | null }[]>(
      `delete from "membership"."document_upload" where "id" in (
         select "id" from "membership"."document_upload" where "expires_at" < now() limit 100 for update skip locked)
       returning "blob_id"`,
    );
    const storage = this.storage(em);
    for (const row of rows) if (row.blob_id) await storage.delete(row.blob_id);
    return rows.length;
  }

  /** Trains the classifiers of accounts whose labels changed, on their user-labelled documents. */
  async train(): Promise<number> {
    const classifier = this.options.classifier;
    if (!classifier) return 0;
    const em = this.orm.em.fork();
    const requests = await em.execute<{ account_id: string; mode: Mode }[]>(
      `delete from "membership"."document_training_request" where ("account_id", "mode") in (
         select "account_id", "mode" from "membership"."document_training_request"
         where "requested_at" <= now() - (? * interval '1 millisecond') limit 10 for update skip locked)
       returning "account_id", "mode"`,
      [this.options.trainingDebounceMs ?? 2 * SECOND],
    );
    for (const request of requests) {
      const scope = { accountId: request.account_id, mode: request.mode };
      const examples = await em.execute<{ text: string; category: string }[]>(
        `select c."text", d."category" from "membership"."document" d join "membership"."document_content" c on c."document_id" = d."id"
         where d."account_id" = ? and d."mode" = ? and d."category_source" = 'user' and d."deleted_at" is null and d."category" is not null`,
        [scope.accountId, scope.mode],
      );
      try {
        const outcome = await classifier.train(em.fork(), scope, examples);
        this.options.logger?.info({ ...scope, ...outcome }, 'document classifier trained');
      } catch (error) {
        this.options.logger?.error({ err: error, ...scope }, 'document classifier training failed');
      }
    }
    return requests.length;
  }
}

function failureOf(error: unknown, timeLimitMs: number): Failure {
  if (error instanceof TimeLimitError) return { reason: 'timeout', detail: `processing took longer than ${timeLimitMs} ms`, permanent: false };
  const reason = (error as { reason?: unknown } | null)?.reason;
  // The extractor's verdicts on the file itself: trying again reads the same bytes.
  if (typeof reason === 'string' && ['encrypted', 'corrupt', 'unsupported', 'empty'].includes(reason)) {
    return { reason, detail: (error as Error).message, permanent: true };
  }
  return { reason: 'error', detail: error instanceof Error ? error.message : String(error), permanent: false };
}
