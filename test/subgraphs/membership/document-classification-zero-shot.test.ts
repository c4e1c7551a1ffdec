import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULT_DOCUMENT_CATEGORIES, DocumentClassificationService } from '../../../subgraphs/membership/document-classification/document-classification.service.js';
import { membershipOrmOptions } from '../../../subgraphs/membership/mikro-orm.config.js';
import { openOrm } from '../../../core/orm.js';
import { llamaInferenceConfig, modelsReady } from '../../support/inference-config.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

/**
 * Zero-shot classification against this platform's own inference gateway, on the embedded
 * llama.cpp with a random-weight model: whatever it "thinks", guided_choice makes its answer one
 * of the category names, and the service files the document with it.
 */
let platform: TestPlatform;
let modelsDir: string;
let orm: MikroORM;

beforeAll(async () => {
  const built = await llamaInferenceConfig();
  modelsDir = built.modelsDir;
  platform = await startTestPlatform({ inference: built.config });
  await modelsReady(platform.baseUrl);
  // The platform migrated the membership schema; the service works on it like the worker does.
  orm = await openOrm({ clientUrl: platform.databaseUrl, ...membershipOrmOptions });
}, 120_000);

afterAll(async () => {
  await orm?.close(true);
  await platform?.close();
  if (modelsDir) await rm(modelsDir, { recursive: true, force: true });
});

const warnings: unknown[] = [];
const log = { warn: (details: unknown) => void warnings.push(details) };

it('the embedded engine answers one of the categories, and the service files the document with it', async () => {
  const service = new DocumentClassificationService({ zeroShot: { baseUrl: `${platform.baseUrl}/inference/gateway/v1`, model: 'tiny', timeoutMs: 30_000 }, log });
  const scope = { accountId: randomUUID(), mode: 'test' };
  // Without the default rules, which would file these two before the zero-shot layer is asked.
  for (const category of await service.categories(orm.em.fork(), scope)) await service.updateCategory(orm.em.fork(), scope, category.id, { rules: [] });
  const seen = new Set<string>();
  for (const text of ['Invoice No. 4711, total EUR 1.234,56', 'Dear Ms Smith, thank you for your letter.']) {
    const result = await service.classify(orm.em.fork(), scope, { text, title: null, filename: 'scan.pdf' });
    expect(result.layer, JSON.stringify(warnings)).toBe('zero-shot');
    expect(DEFAULT_DOCUMENT_CATEGORIES as readonly string[]).toContain(result.category);
    expect(result.confidence).toBeGreaterThan(0);
    expect(result.confidence).toBeLessThanOrEqual(1);
    seen.add(result.category!);
  }
  expect(seen.size).toBeGreaterThan(0);
}, 90_000);

it('a category the account added is among the choices the engine may answer', async () => {
  const service = new DocumentClassificationService({ zeroShot: { baseUrl: `${platform.baseUrl}/inference/gateway/v1`, model: 'tiny', timeoutMs: 30_000 } });
  const scope = { accountId: randomUUID(), mode: 'live' };
  // Only one category left: the constrained answer can only be it.
  for (const category of await service.categories(orm.em.fork(), scope)) await service.deleteCategory(orm.em.fork(), scope, category.id);
  await service.createCategory(orm.em.fork(), scope, { name: 'Tax return' });
  const result = await service.classify(orm.em.fork(), scope, { text: 'Form 1040', title: null, filename: 'f.pdf' });
  expect(result).toMatchObject({ category: 'Tax return', layer: 'zero-shot' });
}, 90_000);

it('an unknown model on the gateway falls through to none', async () => {
  const service = new DocumentClassificationService({ zeroShot: { baseUrl: `${platform.baseUrl}/inference/gateway/v1`, model: 'no-such-model', timeoutMs: 10_000 } });
  const result = await service.classify(orm.em.fork(), { accountId: randomUUID(), mode: 'test' }, { text: 'x', title: null, filename: 'x.txt' });
  expect(result).toMatchObject({ category: null, layer: 'none' });
});
