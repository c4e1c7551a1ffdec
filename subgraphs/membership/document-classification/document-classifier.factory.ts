import type { Logger } from 'pino';
import type { ClassificationSettings } from './classification-settings.js';
import { DocumentClassificationService } from './document-classification.service.js';

/**
 * The classification service as the platform's settings describe it (PlatformConfig's
 * documentClassification: the classifier threshold and the zero-shot provider, if any).
 */
export function documentClassifierFrom(settings: ClassificationSettings, log?: Pick<Logger, 'warn'>): DocumentClassificationService {
  return new DocumentClassificationService({ zeroShot: settings.zeroShot, classifierThreshold: settings.classifierThreshold, log });
}
