import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mode } from '../../../core/principal.js';

/*
 * What the documents core needs from extraction and classification (the libraries in
 * ../document-extraction and ../document-classification satisfy these shapes): the worker and
 * the resolvers are written against them, so a test can wrap the real ones (to fail an attempt).
 */

export interface ExtractedPageData {
  page: number;
  text: string;
  method: 'text-layer' | 'ocr' | 'plain';
  confidence: number | null;
}

export interface KeyFieldData {
  kind: 'date' | 'amount' | 'invoice-number' | 'email' | 'iban';
  value: string;
  normalized: string;
  currency?: string;
  page: number;
  start: number;
  end: number;
}

export interface ExtractionData {
  pages: ExtractedPageData[];
  text: string;
  pageCount: number;
  language: string | null;
  method: 'text-layer' | 'ocr' | 'mixed' | 'plain';
  confidence: number | null;
  keyFields: KeyFieldData[];
}

export interface DocumentTextExtractor {
  extract(bytes: Uint8Array, mime: string, signal?: AbortSignal): Promise<ExtractionData>;
  close(): Promise<void>;
}

export interface DocumentScope {
  accountId: string;
  mode: Mode;
}

export interface ClassificationData {
  category: string | null;
  confidence: number;
  layer: 'rule' | 'classifier' | 'zero-shot' | 'none';
  runnersUp: { category: string; confidence: number }[];
  categoriesVersion: number;
}

export interface DocumentClassifier {
  categories(em: EntityManager, scope: DocumentScope): Promise<{ name: string }[]>;
  classify(em: EntityManager, scope: DocumentScope, doc: { text: string; title: string | null; filename: string }): Promise<ClassificationData>;
  train(em: EntityManager, scope: DocumentScope, examples: { text: string; category: string }[]): Promise<{ accuracy: number | null; trainedOn: number; heldOut: number }>;
  categoriesVersion(em: EntityManager, scope: DocumentScope): Promise<number>;
}
