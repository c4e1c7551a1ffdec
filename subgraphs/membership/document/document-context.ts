import type { SubgraphContext } from '../../shared/context.js';
import type { DocumentClassifier } from './document-pipeline.js';
import type { DocumentSettings } from './document-settings.js';
import type { DocumentStorage } from './document-storage.js';

/** The part of the membership context documents read: settings, where bytes live, the classifier. */
export interface DocumentContext extends SubgraphContext {
  documentSettings: DocumentSettings;
  documentStorage: DocumentStorage;
  documentClassifier?: DocumentClassifier;
}
