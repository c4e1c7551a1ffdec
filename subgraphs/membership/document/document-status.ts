import { registerEnumType } from '../../shared/type-graphql.js';

/** Where a document is in its processing: the upload answers PENDING at once. */
export enum DocumentStatus {
  PENDING = 'pending',
  PROCESSING = 'processing',
  READY = 'ready',
  FAILED = 'failed',
}

registerEnumType(DocumentStatus, {
  name: 'DocumentStatus',
  valuesConfig: {
    PENDING: { description: 'Stored; waiting for a worker (also between retries).' },
    PROCESSING: { description: 'A worker is extracting and classifying it.' },
    READY: { description: 'Text, key fields and category are available.' },
    FAILED: { description: 'Processing gave up; failureReason says why.' },
  },
});
