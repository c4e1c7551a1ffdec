import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CATEGORY_RULES } from '../../../subgraphs/membership/document-classification/default-categories.js';
import { DocumentClassificationService } from '../../../subgraphs/membership/document-classification/document-classification.service.js';
import { ruleProblem } from '../../../subgraphs/membership/document-classification/rule-matcher.js';
import { membershipOrmOptions } from '../../../subgraphs/membership/mikro-orm.config.js';
import { migrate, openOrm } from '../../../core/orm.js';
import { createTestDatabase } from '../../support/database.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;
const service = new DocumentClassificationService();

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openOrm({ clientUrl: db.url, ...membershipOrmOptions });
  await migrate(orm, db.url, membershipOrmOptions.schema);
});
afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
});

const em = () => orm.em.fork();
const freshAccount = () => ({ accountId: randomUUID(), mode: 'live' });

/** Documents as they come, each the obvious case of its category; none names another category's words by chance. */
const OBVIOUS: [string, { text: string; filename: string }][] = [
  ['invoice', { filename: 'INV-2026-0042.pdf', text: 'ACME Supplies Ltd\nINVOICE\nInvoice No. 2026-0042\nInvoice date: 23.11.2026\nWidgets 3 x EUR 40.00\nTotal due: EUR 120.00\nPayment terms: 30 days. Please pay by bank transfer.' }],
  ['invoice', { filename: 'scan_0001.pdf', text: 'Rechnung Nr. 4711\nLeistungszeitraum November 2026\nGesamtbetrag 1.234,56 EUR\nFällig am 15.12.2026' }],
  ['receipt', { filename: 'photo.jpg', text: 'CORNER CAFE\n2 x Flat white 7.00\nTOTAL 7.00\nVISA card ending in 4242\nAuth code 123456\nThank you for your purchase!' }],
  ['contract', { filename: 'nda.pdf', text: 'MUTUAL NON-DISCLOSURE AGREEMENT\nThis Agreement is made between Alpha GmbH (hereinafter "Alpha") and Beta Ltd.\nThe parties agree as follows.\nGoverning law: England.\nSigned by both parties on the effective date.' }],
  ['resume', { filename: 'ada.pdf', text: 'Ada Lovelace\nCurriculum Vitae\nProfessional experience\n2020-2026 Analyst, Engine Works\nEducation\nMathematics, London\nSkills: algorithms, notation' }],
  ['identity document', { filename: 'scan.png', text: 'PASSPORT\nSurname: LOVELACE\nNationality: BRITISH\nDate of birth: 10 DEC 1815\nP<GBRLOVELACE<<ADA<<<<<<<<<<<<<<<<<<<<<<<<<<<' }],
  ['letter', { filename: 'letter.docx', text: '12 Harbour Road\nLondon\n\nDear Ms Byron,\n\nthank you for your kind note about the meeting on Tuesday.\n\nYours sincerely,\nAda' }],
  ['report', { filename: 'q3.pdf', text: 'Quarterly report Q3 2026\nTable of contents\nExecutive summary\nMethodology\nKey findings\nRecommendations' }],
];

describe('the default categories of a fresh account', () => {
  it.each(OBVIOUS)('file an obvious %s as one by their default rules, with no classifier trained', async (category, document) => {
    const result = await service.classify(em(), freshAccount(), { title: null, ...document });
    expect(result).toMatchObject({ category, layer: 'rule', confidence: 1 });
  });

  it('leave a document that is none of them unfiled (layer none), never a made-up "other"', async () => {
    const result = await service.classify(em(), freshAccount(), { title: null, filename: 'notes.txt', text: 'The sailing boat was repaired in the harbour; new sails next spring.' });
    expect(result).toMatchObject({ category: null, layer: 'none' });
  });

  it('come with their rules listed and editable: removing the invoice rules stops filing invoices by them', async () => {
    const scope = freshAccount();
    const categories = await service.categories(em(), scope);
    expect(categories.map((c) => [c.name, c.rules.getItems().map((r) => r.pattern)])).toEqual(Object.entries(DEFAULT_CATEGORY_RULES).map(([name, rules]) => [name, rules.map((r) => r.pattern)]));
    const invoice = categories.find((c) => c.name === 'invoice')!;
    await service.updateCategory(em(), scope, invoice.id, { rules: [] });
    const result = await service.classify(em(), scope, { title: null, ...OBVIOUS[0][1] });
    expect(result.category).not.toBe('invoice');
  });

  it('are rules the write-time checks accept (no pattern that could backtrack without end)', () => {
    for (const [category, rules] of Object.entries(DEFAULT_CATEGORY_RULES)) {
      for (const rule of rules) expect(ruleProblem(rule), `${category}: ${rule.pattern}`).toBeNull();
    }
  });

  it('are seeded once when an account uses documents from several requests at once', async () => {
    const scope = freshAccount();
    await Promise.all(Array.from({ length: 5 }, () => service.categories(em(), scope)));
    const [{ n }] = await em().execute('select count(*)::int as n from "membership"."document_category_rule" where "account_id" = ?', [scope.accountId]);
    expect(n).toBe(Object.values(DEFAULT_CATEGORY_RULES).reduce((sum, rules) => sum + rules.length, 0));
  });
});
