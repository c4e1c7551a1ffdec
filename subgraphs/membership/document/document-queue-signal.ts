import { EventEmitter } from 'node:events';

/**
 * Told when a document was filed in this process, so this process's worker starts on it at once
 * instead of at its next poll. Other instances find it by polling; the queue itself is the table.
 */
export const documentQueueSignal = new EventEmitter();
documentQueueSignal.setMaxListeners(0);

export const DOCUMENT_QUEUED = 'queued';
