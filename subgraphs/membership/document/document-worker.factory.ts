import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { DocumentExtractor } from '../document-extraction/document-extractor.js';
import { DocumentClassificationService } from '../document-classification/document-classification.service.js';
import type { DocumentClassifier } from './document-pipeline.js';
import type { DocumentSettings } from './document-settings.js';
import { DocumentWorker } from './document.worker.js';

/** The classifier documents are filed with: rules, the account's trained model, zero-shot. */
export function defaultDocumentClassifier(): DocumentClassifier {
  return new DocumentClassificationService();
}

/** The platform's document worker: the real extractor (one OCR thread per worker slot) and classifier. */
export function createDocumentWorker(orm: MikroORM, settings: DocumentSettings, logger?: Logger, classifier: DocumentClassifier = defaultDocumentClassifier()): { start(): void; stop(): Promise<void> } {
  const extractor = new DocumentExtractor({ ocrWorkers: settings.workers });
  const worker = new DocumentWorker(orm, { settings, extractor, classifier, logger });
  return {
    start: () => worker.start(),
    stop: async () => {
      await worker.stop();
      await extractor.close();
    },
  };
}
