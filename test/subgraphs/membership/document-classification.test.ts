import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentRuleKind } from '../../../subgraphs/membership/document-classification/document-rule-kind.js';
import { DEFAULT_DOCUMENT_CATEGORIES, DocumentClassificationService } from '../../../subgraphs/membership/document-classification/document-classification.service.js';
import { membershipOrmOptions } from '../../../subgraphs/membership/mikro-orm.config.js';
import { migrate, openOrm } from '../../../core/orm.js';
import { createTestDatabase } from '../../support/database.js';
import { LoopbackOpenAiServer } from '../../support/loopback-openai-server.js';

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
const newScope = (mode: 'live' | 'test' = 'test') => ({ accountId: randomUUID(), mode });

/** A new scope whose default categories have no rules: what a test of another layer (or of one rule) needs. */
async function bareScope(): Promise<ReturnType<typeof newScope>> {
  const scope = newScope();
  for (const category of await service.categories(em(), scope)) await service.updateCategory(em(), scope, category.id, { rules: [] });
  return scope;
}
const doc = (text: string, title: string | null = null, filename = 'scan.pdf') => ({ text, title, filename });

async function rejection(promise: Promise<unknown>): Promise<{ code: string; reason?: string; param?: string; message: string }> {
  const error = (await promise.then(
    () => null,
    (e: unknown) => e,
  )) as { extensions?: { code: string; reason?: string; param?: string }; message: string } | null;
  expect(error?.extensions?.code).toBeDefined();
  return { ...error!.extensions!, message: error!.message };
}

// A small labelled corpus: each category has its own vocabulary, every document also carries
// shared filler words, drawn by a seeded generator so that the corpus is the same on every run.
const VOCABULARY: Record<string, string[]> = {
  invoice: ['invoice', 'amount', 'due', 'payment', 'vat', 'billing', 'net', 'terms', 'balance', 'remit', 'tax', 'subtotal', 'account', 'overdue'],
  receipt: ['receipt', 'paid', 'cash', 'change', 'store', 'cashier', 'purchase', 'thank', 'card', 'register', 'item', 'quantity', 'shop', 'refundable'],
  contract: ['agreement', 'party', 'parties', 'clause', 'term', 'termination', 'obligations', 'hereby', 'signed', 'liability', 'governing', 'law', 'witness', 'binding'],
  resume: ['experience', 'skills', 'education', 'university', 'degree', 'engineer', 'projects', 'languages', 'references', 'career', 'objective', 'internship', 'certified', 'proficient'],
  'identity document': ['passport', 'nationality', 'birth', 'surname', 'given', 'names', 'issuing', 'authority', 'expiry', 'identity', 'card', 'sex', 'height', 'holder'],
  letter: ['dear', 'sincerely', 'regards', 'writing', 'hope', 'reply', 'kindly', 'yours', 'faithfully', 'wishes', 'letter', 'grateful', 'forward', 'hearing'],
  report: ['report', 'analysis', 'findings', 'summary', 'results', 'quarter', 'growth', 'figures', 'chart', 'conclusion', 'recommendations', 'methodology', 'data', 'trend'],
  other: ['recipe', 'flour', 'sugar', 'bake', 'oven', 'minutes', 'stir', 'butter', 'eggs', 'mix', 'bowl', 'serve', 'salt', 'pepper'],
};
const FILLER = ['the', 'company', 'office', 'please', 'date', 'number', 'name', 'address', 'page', 'information', 'year', 'new', 'make', 'time', 'section', 'note'];

function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function corpus(perCategory: number, seed: number): { text: string; category: string }[] {
  const random = generator(seed);
  const pick = <T,>(list: T[]) => list[Math.floor(random() * list.length)];
  return Object.entries(VOCABULARY).flatMap(([category, words]) =>
    Array.from({ length: perCategory }, () => ({
      category,
      text: Array.from({ length: 30 }, () => (random() < 0.3 ? pick(words) : pick(FILLER))).join(' '),
    })),
  );
}

describe('categories', () => {
  it('start as the eight defaults, made once even when first used concurrently', async () => {
    const scope = newScope();
    const results = await Promise.all([1, 2, 3, 4].map(() => service.categories(em(), scope)));
    for (const categories of results) expect(categories.map((c) => c.name)).toEqual([...DEFAULT_DOCUMENT_CATEGORIES]);
    const [{ n }] = await em().execute('select count(*)::int as n from "membership"."document_category" where "account_id" = ?', [scope.accountId]);
    expect(n).toBe(8);
    expect(await service.categoriesVersion(em(), scope)).toBe(1);
  });

  it('belong to one account and mode: test categories are not live ones', async () => {
    const scope = newScope('test');
    await service.createCategory(em(), scope, { name: 'Tax return' });
    const live = await service.categories(em(), { ...scope, mode: 'live' });
    expect(live.map((c) => c.name)).not.toContain('Tax return');
    const other = await service.categories(em(), newScope('test'));
    expect(other.map((c) => c.name)).not.toContain('Tax return');
    const foreign = (await service.categories(em(), scope)).find((c) => c.name === 'Tax return')!;
    expect((await rejection(service.deleteCategory(em(), { ...scope, mode: 'live' }, foreign.id))).code).toBe('NOT_FOUND');
  });

  it('are created, renamed, given rules and deleted, each change bumping the version', async () => {
    const scope = newScope();
    const v1 = await service.categoriesVersion(em(), scope);
    const created = await service.createCategory(em(), scope, { name: '  Tax   return ', rules: [{ kind: DocumentRuleKind.ANY, pattern: 'tax irs' }] });
    expect(created.name).toBe('Tax return');
    const v2 = await service.categoriesVersion(em(), scope);
    expect(v2).toBe(v1 + 1);
    const renamed = await service.updateCategory(em(), scope, created.id, { name: 'Tax', rules: [{ kind: DocumentRuleKind.EXACT, pattern: 'tax assessment' }, { kind: DocumentRuleKind.FUZZY, pattern: 'income tax', threshold: 0.7 }] });
    expect(renamed.name).toBe('Tax');
    expect(await service.categoriesVersion(em(), scope)).toBe(v2 + 1);
    const stored = (await service.categories(em(), scope)).find((c) => c.id === created.id)!;
    expect(stored.rules.getItems().map((r) => [r.position, r.kind, r.pattern, r.threshold])).toEqual([
      [0, 'exact', 'tax assessment', null],
      [1, 'fuzzy', 'income tax', 0.7],
    ]);
    const deleted = await service.deleteCategory(em(), scope, created.id);
    expect(deleted.name).toBe('Tax');
    expect(await service.categoriesVersion(em(), scope)).toBe(v2 + 2);
    expect((await service.categories(em(), scope)).map((c) => c.name)).not.toContain('Tax');
    const [{ n }] = await em().execute('select count(*)::int as n from "membership"."document_category_rule" where "category_id" = ?', [created.id]);
    expect(n).toBe(0);
  });

  it('are not seeded again once the account deleted them all', async () => {
    const scope = newScope();
    for (const category of await service.categories(em(), scope)) await service.deleteCategory(em(), scope, category.id);
    expect(await service.categories(em(), scope)).toEqual([]);
    const result = await service.classify(em(), scope, doc('an invoice'));
    expect(result).toMatchObject({ category: null, layer: 'none' });
  });

  it('refuse a duplicate name in any case with CONFLICT (409)', async () => {
    const scope = newScope();
    const error = await rejection(service.createCategory(em(), scope, { name: 'INVOICE' }));
    expect(error).toMatchObject({ code: 'CONFLICT', reason: 'document_category_name_taken', param: 'name' });
    const tax = await service.createCategory(em(), scope, { name: 'Tax' });
    expect((await rejection(service.updateCategory(em(), scope, tax.id, { name: 'receipt' }))).code).toBe('CONFLICT');
    // Renaming to itself in another case is not a conflict.
    expect((await service.updateCategory(em(), scope, tax.id, { name: 'TAX' })).name).toBe('TAX');
  });

  it('refuse bad rules with BAD_USER_INPUT (400) and the reason', async () => {
    const scope = newScope();
    const cases: [DocumentRuleKind, string, RegExp][] = [
      [DocumentRuleKind.REGEX, '(unclosed', /not a valid regular expression/],
      [DocumentRuleKind.REGEX, '(a+)+$', /nested quantifiers/],
      [DocumentRuleKind.REGEX, '(\\w+\\s?)*', /nested quantifiers/],
      [DocumentRuleKind.REGEX, '(x)\\1', /back-references/],
      [DocumentRuleKind.REGEX, 'a'.repeat(201), /at most 200/],
      [DocumentRuleKind.ANY, '   ', /blank/],
      [DocumentRuleKind.FUZZY, 'one two three four five six seven eight nine', /at most 8 words/],
    ];
    for (const [kind, pattern, reason] of cases) {
      const error = await rejection(service.createCategory(em(), scope, { name: `c-${kind}-${pattern.length}`, rules: [{ kind, pattern }] }));
      expect(error).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_document_rule', param: 'rules[0].pattern' });
      expect(error.message).toMatch(reason);
    }
    const threshold = await rejection(service.createCategory(em(), scope, { name: 'x', rules: [{ kind: DocumentRuleKind.ANY, pattern: 'x', threshold: 0.5 }] }));
    expect(threshold.message).toMatch(/only for FUZZY/);
    // Nothing was stored by the refused requests.
    expect((await service.categories(em(), scope)).length).toBe(8);
  });

  it('answer NOT_FOUND for an unknown or malformed id', async () => {
    const scope = newScope();
    expect((await rejection(service.updateCategory(em(), scope, randomUUID(), { name: 'x' }))).reason).toBe('document_category_not_found');
    expect((await rejection(service.deleteCategory(em(), scope, 'not-a-uuid'))).code).toBe('NOT_FOUND');
  });
});

describe('rules decide first', () => {
  async function withRules(rules: Record<string, { kind: DocumentRuleKind; pattern: string; caseSensitive?: boolean; threshold?: number }[]>) {
    const scope = newScope();
    for (const category of await service.categories(em(), scope)) {
      await service.updateCategory(em(), scope, category.id, { rules: rules[category.name] ?? [] });
    }
    return scope;
  }

  it('ANY: one whole word; ALL: every word in any order', async () => {
    const scope = await withRules({ invoice: [{ kind: DocumentRuleKind.ANY, pattern: 'invoice bill' }], contract: [{ kind: DocumentRuleKind.ALL, pattern: 'agreement signed' }] });
    expect(await service.classify(em(), scope, doc('Please pay this BILL soon'))).toMatchObject({ category: 'invoice', confidence: 1, layer: 'rule', runnersUp: [] });
    expect((await service.classify(em(), scope, doc('billing department'))).layer).toBe('none'); // "bill" is not a whole word there
    expect((await service.classify(em(), scope, doc('signed, this agreement'))).category).toBe('contract');
    expect((await service.classify(em(), scope, doc('this agreement is a draft'))).category).toBeNull();
  });

  it('EXACT: the phrase with any whitespace between its words', async () => {
    const scope = await withRules({ letter: [{ kind: DocumentRuleKind.EXACT, pattern: 'yours sincerely' }] });
    expect((await service.classify(em(), scope, doc('...\nYours\n  sincerely,\nJohn'))).category).toBe('letter');
    expect((await service.classify(em(), scope, doc('sincerely yours'))).category).toBeNull();
  });

  it('REGEX: a bounded expression, case-insensitive unless asked', async () => {
    const scope = await withRules({
      receipt: [{ kind: DocumentRuleKind.REGEX, pattern: 'receipt\\s+#\\d{4,}' }],
      report: [{ kind: DocumentRuleKind.REGEX, pattern: 'Q[1-4] REPORT', caseSensitive: true }],
    });
    expect((await service.classify(em(), scope, doc('RECEIPT #12345'))).category).toBe('receipt');
    expect((await service.classify(em(), scope, doc('receipt #12'))).category).toBeNull();
    expect((await service.classify(em(), scope, doc('The Q3 REPORT'))).category).toBe('report');
    expect((await service.classify(em(), scope, doc('the q3 report'))).category).toBeNull();
  });

  it('FUZZY: an OCR slip or a misspelling within the threshold matches, a different phrase does not', async () => {
    const scope = await withRules({ 'identity document': [{ kind: DocumentRuleKind.FUZZY, pattern: 'passport number' }] });
    expect((await service.classify(em(), scope, doc('PASSP0RT NUMBEER X1234'))).category).toBe('identity document');
    expect((await service.classify(em(), scope, doc('passing numbers'))).category).toBeNull();
    const strict = await withRules({ 'identity document': [{ kind: DocumentRuleKind.FUZZY, pattern: 'passport number', threshold: 0.99 }] });
    expect((await service.classify(em(), strict, doc('PASSP0RT NUMBEER X1234'))).category).toBeNull();
  });

  it('read the title and the filename too', async () => {
    const scope = await withRules({ resume: [{ kind: DocumentRuleKind.ANY, pattern: 'cv resume' }] });
    expect((await service.classify(em(), scope, doc('Jane Doe, engineer', null, 'jane-doe-cv.pdf'))).category).toBe('resume');
    expect((await service.classify(em(), scope, doc('Jane Doe, engineer', 'My resume', 'x.pdf'))).category).toBe('resume');
  });

  it('several matching categories: the one with most matching rules wins, the others are runners-up', async () => {
    const scope = await withRules({
      invoice: [{ kind: DocumentRuleKind.ANY, pattern: 'invoice' }, { kind: DocumentRuleKind.ANY, pattern: 'vat' }],
      receipt: [{ kind: DocumentRuleKind.ANY, pattern: 'paid' }],
    });
    const result = await service.classify(em(), scope, doc('Invoice, VAT included, paid in full'));
    expect(result).toMatchObject({ category: 'invoice', layer: 'rule', confidence: 1, runnersUp: [{ category: 'receipt', confidence: 1 }] });
    expect(result.categoriesVersion).toBe(await service.categoriesVersion(em(), scope));
  });
});

describe('the classifier trained on the account\'s documents', () => {
  it('learns a generated corpus, records held-out accuracy, and decides when confident', async () => {
    const scope = await bareScope();
    const examples = corpus(10, 42);
    const trained = await service.train(em(), scope, examples);
    expect(trained.trainedOn).toBe(80);
    expect(trained.heldOut).toBe(16); // 20% of each category's 10
    expect(trained.accuracy).not.toBeNull();
    expect(trained.accuracy!).toBeGreaterThanOrEqual(0.8);
    console.log(`classifier held-out accuracy: ${trained.accuracy} (${trained.heldOut} held out of ${examples.length})`);
    const status = await service.classifierStatus(em(), scope);
    expect(status).toMatchObject({ accuracy: trained.accuracy, trainedOn: 80, heldOut: 16 });
    expect(status!.labels).toEqual(Object.keys(VOCABULARY).sort());

    // Fresh documents of the same kinds, never seen in training.
    const fresh = corpus(3, 7);
    let right = 0;
    for (const example of fresh) {
      const result = await service.classify(em(), scope, doc(example.text));
      if (result.layer === 'classifier' && result.category === example.category) right++;
      if (result.layer === 'classifier') {
        expect(result.confidence).toBeGreaterThanOrEqual(0.6);
        expect(result.runnersUp.length).toBeLessThanOrEqual(3);
        expect(result.runnersUp.every((r) => r.confidence <= result.confidence && r.category !== result.category)).toBe(true);
      }
    }
    expect(right / fresh.length).toBeGreaterThanOrEqual(0.8);
  });

  it('retraining after a correction changes the outcome', async () => {
    const scope = await bareScope();
    const examples = corpus(10, 3);
    await service.train(em(), scope, examples);
    const ambiguous = 'invoice amount due payment glacier zebra quantum nebula';
    const before = await service.classify(em(), scope, doc(ambiguous));
    expect(before.category).toBe('invoice');
    // The user files documents like this one as contracts: corrections feed the next training.
    const corrections = Array.from({ length: 6 }, (_, i) => ({ category: 'contract', text: `glacier zebra quantum nebula invoice amount ${['one', 'two', 'three', 'four', 'five', 'six'][i]}` }));
    await service.train(em(), scope, [...examples, ...corrections]);
    const after = await service.classify(em(), scope, doc(ambiguous));
    expect(after).toMatchObject({ category: 'contract', layer: 'classifier' });
    expect(after.runnersUp.map((r) => r.category)).toContain('invoice');
  });

  it('leaves below-threshold predictions to the next layer, naming them as runners-up', async () => {
    const scope = await bareScope();
    await service.train(em(), scope, corpus(10, 5));
    const unsure = new DocumentClassificationService({ classifierThreshold: 0.999999 });
    const result = await unsure.classify(em(), scope, doc('invoice receipt paid amount'));
    expect(result.layer).toBe('none');
    expect(result.category).toBeNull();
    expect(result.runnersUp.length).toBeGreaterThan(0);
    expect(result.confidence).toBe(result.runnersUp[0].confidence);
  });

  it('needs two categories: otherwise no model, and accuracy is null when too few are held out', async () => {
    const scope = await bareScope();
    expect(await service.train(em(), scope, corpus(10, 1).filter((e) => e.category === 'invoice'))).toEqual({ accuracy: null, trainedOn: 0, heldOut: 0 });
    expect(await service.classifierStatus(em(), scope)).toBeNull();
    const few = await service.train(em(), scope, corpus(2, 1).filter((e) => ['invoice', 'receipt'].includes(e.category)));
    expect(few).toEqual({ accuracy: null, trainedOn: 4, heldOut: 0 });
    // Labels that are not categories (deleted since) are left out.
    const unknown = await service.train(em(), scope, [...corpus(2, 1).filter((e) => e.category === 'invoice'), { text: 'whatever words here', category: 'no such category' }]);
    expect(unknown.trainedOn).toBe(0);
  });

  it('ignores predictions of a category deleted after training', async () => {
    const scope = await bareScope();
    await service.train(em(), scope, corpus(10, 9));
    const other = (await service.categories(em(), scope)).find((c) => c.name === 'other')!;
    await service.deleteCategory(em(), scope, other.id);
    const result = await service.classify(em(), scope, doc('recipe flour sugar bake oven butter eggs'));
    expect(result.category).not.toBe('other');
    expect(result.runnersUp.map((r) => r.category)).not.toContain('other');
  });
});

describe('zero-shot through an OpenAI-compatible provider (loopback)', () => {
  let loopback: LoopbackOpenAiServer;
  beforeAll(async () => {
    loopback = await LoopbackOpenAiServer.start('vllm');
  });
  afterAll(async () => {
    await loopback?.close();
  });

  const zeroShot = (timeoutMs = 2_000) => {
    const warnings: unknown[] = [];
    const classifier = new DocumentClassificationService({ zeroShot: { baseUrl: `${loopback.url}/v1`, apiKey: 'secret-key', model: 'loop-model', timeoutMs }, log: { warn: (obj: unknown) => void warnings.push(obj) } as never });
    return { classifier, warnings };
  };

  it('answers the category the model chose, sending guided_choice with the category names', async () => {
    loopback.reset();
    loopback.behaviour.reply = ['Re', 'port'];
    const { classifier } = zeroShot();
    const scope = newScope();
    const result = await classifier.classify(em(), scope, doc('Quarterly figures', 'Q3', 'q3.pdf'));
    expect(result).toMatchObject({ category: 'report', layer: 'zero-shot' });
    expect(result.confidence).toBeGreaterThan(0);
    const request = loopback.requests.at(-1)!;
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer secret-key');
    expect((request.body as { guided_choice: string[] }).guided_choice).toEqual([...DEFAULT_DOCUMENT_CATEGORIES]);
    expect((request.body as { model: string }).model).toBe('loop-model');
  });

  it('ignores an answer outside the category list', async () => {
    loopback.reset();
    loopback.behaviour.reply = ['banana'];
    const { classifier, warnings } = zeroShot();
    expect(await classifier.classify(em(), newScope(), doc('text'))).toMatchObject({ category: null, layer: 'none' });
    expect(JSON.stringify(warnings)).toMatch(/not a category/);
  });

  it('falls through on an error status', async () => {
    loopback.reset();
    loopback.behaviour.fail = { status: 500, message: 'boom' };
    const { classifier, warnings } = zeroShot();
    expect(await classifier.classify(em(), newScope(), doc('text'))).toMatchObject({ category: null, layer: 'none' });
    expect(JSON.stringify(warnings)).toMatch(/answered 500/);
  });

  it('falls through on a timeout, within about the timeout', async () => {
    loopback.reset();
    loopback.behaviour.headerDelayMs = 3_000;
    const { classifier, warnings } = zeroShot(300);
    const started = Date.now();
    expect(await classifier.classify(em(), newScope(), doc('text'))).toMatchObject({ category: null, layer: 'none' });
    expect(Date.now() - started).toBeLessThan(2_500);
    expect(JSON.stringify(warnings)).toMatch(/timed out/);
  });

  it('falls through when the provider is unreachable', async () => {
    const classifier = new DocumentClassificationService({ zeroShot: { baseUrl: 'http://127.0.0.1:9/v1', model: 'x', timeoutMs: 1_000 } });
    expect(await classifier.classify(em(), newScope(), doc('text'))).toMatchObject({ category: null, layer: 'none' });
  });

  it('comes after rules and a confident classifier', async () => {
    loopback.reset();
    loopback.behaviour.reply = ['other'];
    const { classifier } = zeroShot();
    const scope = newScope();
    const invoice = (await service.categories(em(), scope)).find((c) => c.name === 'invoice')!;
    await service.updateCategory(em(), scope, invoice.id, { rules: [{ kind: DocumentRuleKind.ANY, pattern: 'invoice' }] });
    const requests = loopback.requests.length;
    expect((await classifier.classify(em(), scope, doc('an invoice'))).layer).toBe('rule');
    await service.train(em(), scope, corpus(10, 11));
    expect((await classifier.classify(em(), scope, doc('recipe flour sugar bake oven butter eggs stir bowl'))).layer).toBe('classifier');
    expect(loopback.requests.length).toBe(requests);
  });
});
