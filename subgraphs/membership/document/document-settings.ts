/** How documents are taken in, kept and processed; read from the environment by platform/config.ts. */
export interface DocumentSettings {
  /** Largest file accepted, in bytes (DOCUMENT_MAX_UPLOAD_BYTES, 25 MiB). */
  maxUploadBytes: number;
  /** The same bytes uploaded again by one account and mode make a second document instead of 409 (DOCUMENT_ALLOW_DUPLICATES). */
  allowDuplicates: boolean;
  /** Days a deleted document stays restorable before the worker purges it with its bytes (DOCUMENT_TRASH_RETENTION_DAYS). */
  trashRetentionDays: number;
  /** Documents one instance processes at the same time (DOCUMENT_WORKERS). */
  workers: number;
  /** Time limit of one processing attempt (DOCUMENT_TIME_LIMIT_MS). */
  timeLimitMs: number;
  /** Attempts after the first before a document is failed (DOCUMENT_RETRIES). */
  retries: number;
}

export const DEFAULT_DOCUMENT_SETTINGS: DocumentSettings = {
  maxUploadBytes: 25 * 1024 * 1024,
  allowDuplicates: false,
  trashRetentionDays: 30,
  workers: 2,
  timeLimitMs: 120_000,
  retries: 2,
};

/** The part of the membership context that document uploads read. */
export interface DocumentSettingsContext {
  documentSettings?: DocumentSettings;
}
