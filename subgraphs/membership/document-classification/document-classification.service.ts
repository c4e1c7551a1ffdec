import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Mode } from '../../../core/principal.js';
import { cursorParts, encodeCursor } from '../../shared/cursor.js';
import { DEFAULT_PAGE_SIZE, InvalidCursorError, UUID, type Page } from '../../shared/pagination.js';
import { DEFAULT_CLASSIFICATION_SETTINGS, type ZeroShotSettings } from './classification-settings.js';
import { DEFAULT_CATEGORY_RULES } from './default-categories.js';
import { DocumentCategory, normalizeCategoryName } from './document-category.entity.js';
import { DocumentCategoryRule } from './document-category-rule.entity.js';
import { DocumentCategoryState } from './document-category-state.entity.js';
import { DocumentClassifierModel } from './document-classifier-model.entity.js';
import { DocumentCategoryNameTakenError, DocumentCategoryNotFoundError, InvalidDocumentCategoryError, InvalidDocumentRuleError } from './document-classification.errors.js';
import { MAX_RULES_PER_CATEGORY, type DocumentCategoryRuleInput } from './document-classification.inputs.js';
import { predict, train as trainModel } from './naive-bayes.js';
import { MAX_MATCH_TEXT, ruleMatches, ruleProblem } from './rule-matcher.js';
import { zeroShotChoice } from './zero-shot.js';

export { DocumentCategory } from './document-category.entity.js';

/** The categories a new account starts with (made on its first use of documents), with their default rules. */
export const DEFAULT_DOCUMENT_CATEGORIES = Object.keys(DEFAULT_CATEGORY_RULES);
export const MAX_CATEGORIES = 100;
const RUNNERS_UP = 3;

export interface ClassificationScope {
  accountId: string;
  mode: string;
}

export interface ClassificationResult {
  /** null when no layer decided (never a made-up "other"). */
  category: string | null;
  confidence: number;
  layer: 'rule' | 'classifier' | 'zero-shot' | 'none';
  runnersUp: { category: string; confidence: number }[];
  categoriesVersion: number;
}

export interface DocumentClassificationOptions {
  zeroShot?: ZeroShotSettings | null;
  /** The classifier's top probability must reach this to decide (default 0.6). */
  classifierThreshold?: number;
  /** Where a zero-shot failure is reported (it never fails the classification). */
  log?: Pick<Logger, 'warn'>;
}

export interface CategoryInput {
  name?: string | null;
  rules?: DocumentCategoryRuleInput[] | null;
}

const TABLE = {
  state: '"membership"."document_category_state"',
  category: '"membership"."document_category"',
  rule: '"membership"."document_category_rule"',
};

/**
 * Document categories and their rules per account and mode, the classifier trained on the
 * account's labelled documents, and classification through three layers: rules, then the
 * classifier when it is confident, then a zero-shot choice when a provider is configured.
 */
export class DocumentClassificationService {
  private readonly zeroShot: ZeroShotSettings | null;
  private readonly classifierThreshold: number;
  private readonly log: Pick<Logger, 'warn'> | undefined;

  constructor(options: DocumentClassificationOptions = {}) {
    this.zeroShot = options.zeroShot ?? null;
    this.classifierThreshold = options.classifierThreshold ?? DEFAULT_CLASSIFICATION_SETTINGS.classifierThreshold;
    this.log = options.log;
  }

  /** The scope's categories with their rules, oldest first; the defaults are made on first use. */
  async categories(em: EntityManager, scope: ClassificationScope): Promise<DocumentCategory[]> {
    await this.seed(em, scope);
    return em.find(DocumentCategory, { accountId: scope.accountId, mode: scope.mode as Mode }, { populate: ['rules'], orderBy: { createdAt: 'asc', name: 'asc' } });
  }

  /**
   * A page of the scope's categories, oldest first, in the shape of every list. A scope holds at
   * most MAX_CATEGORIES, so the page is cut from the whole ordered list: the cursor names the last
   * category shown (and its creation time, should it be deleted before the next page is asked for).
   */
  async pageCategories(em: EntityManager, scope: ClassificationScope, args: { limit?: number | null; after?: string | null }): Promise<Page<DocumentCategory>> {
    const all = await this.categories(em, scope);
    let start = 0;
    if (args.after) {
      const parts = cursorParts(args.after);
      const [id, at] = parts ?? [];
      if (parts?.length !== 2 || typeof id !== 'string' || typeof at !== 'string' || Number.isNaN(Date.parse(at))) throw new InvalidCursorError();
      const index = all.findIndex((category) => category.id === id);
      start = index >= 0 ? index + 1 : all.findIndex((category) => category.createdAt.getTime() > Date.parse(at));
      if (start < 0) start = all.length;
    }
    const limit = args.limit ?? DEFAULT_PAGE_SIZE;
    const data = all.slice(start, start + limit);
    const hasMore = start + limit < all.length;
    const last = data[data.length - 1];
    return { data, hasMore, nextCursor: hasMore && last ? encodeCursor([last.id, last.createdAt.toISOString()]) : null };
  }

  /** Bumped by every change of a category or a rule: a classification stored with an older version is stale. */
  async categoriesVersion(em: EntityManager, scope: ClassificationScope): Promise<number> {
    await this.seed(em, scope);
    const rows = await em.execute<{ version: number }[]>(`select "version" from ${TABLE.state} where "account_id" = ? and "mode" = ?`, [scope.accountId, scope.mode]);
    return rows[0]?.version ?? 1;
  }

  async classify(em: EntityManager, scope: ClassificationScope, doc: { text: string; title: string | null; filename: string }): Promise<ClassificationResult> {
    const categories = await this.categories(em, scope);
    const categoriesVersion = await this.categoriesVersion(em, scope);
    const names = new Map(categories.map((category) => [category.name.toLowerCase(), category.name]));

    // The classifier's view, also used to rank several matching rules and to name runners-up.
    const model = await em.findOne(DocumentClassifierModel, { accountId: scope.accountId, mode: scope.mode as Mode });
    const predictions = model
      ? predict(model.model, doc.text)
          .filter((p) => names.has(p.category.toLowerCase()))
          .map((p) => ({ category: names.get(p.category.toLowerCase())!, confidence: round(p.probability) }))
      : [];
    const probability = (name: string) => predictions.find((p) => p.category === name)?.confidence ?? 0;

    // (a) Rules read the title and filename too: "invoice_2026_11.pdf" says what it is.
    const haystack = [doc.title ?? '', doc.filename, doc.text].join('\n').slice(0, MAX_MATCH_TEXT);
    const matched = categories
      .map((category, order) => ({ category, order, hits: category.rules.getItems().filter((rule) => ruleMatches(rule, haystack)).length }))
      .filter((entry) => entry.hits > 0)
      .sort((a, b) => b.hits - a.hits || probability(b.category.name) - probability(a.category.name) || a.order - b.order);
    if (matched.length) {
      return {
        category: matched[0].category.name,
        confidence: 1,
        layer: 'rule',
        runnersUp: matched.slice(1).map((entry) => ({ category: entry.category.name, confidence: 1 })),
        categoriesVersion,
      };
    }

    // (b) The classifier, when it is sure enough.
    if (predictions.length && predictions[0].confidence >= this.classifierThreshold) {
      return { category: predictions[0].category, confidence: predictions[0].confidence, layer: 'classifier', runnersUp: predictions.slice(1, 1 + RUNNERS_UP), categoriesVersion };
    }

    // (c) Zero-shot, constrained to the category names.
    if (this.zeroShot && categories.length) {
      const choice = await zeroShotChoice(this.zeroShot, categories.map((category) => category.name), doc);
      if (typeof choice !== 'string') {
        return {
          category: choice.category,
          confidence: choice.confidence,
          layer: 'zero-shot',
          runnersUp: predictions.filter((p) => p.category !== choice.category).slice(0, RUNNERS_UP),
          categoriesVersion,
        };
      }
      this.log?.warn({ accountId: scope.accountId, mode: scope.mode, reason: choice }, 'zero-shot document classification fell through');
    }

    return { category: null, confidence: predictions[0]?.confidence ?? 0, layer: 'none', runnersUp: predictions.slice(0, RUNNERS_UP), categoriesVersion };
  }

  /**
   * Trains the scope's classifier on its labelled documents (the caller gathers them: every
   * document with a category, corrections included) and stores it. Labels that are no longer
   * categories are left out. Too few examples (fewer than two categories) remove the model.
   */
  async train(em: EntityManager, scope: ClassificationScope, examples: { text: string; category: string }[]): Promise<{ accuracy: number | null; trainedOn: number; heldOut: number }> {
    const categories = await this.categories(em, scope);
    const names = new Map(categories.map((category) => [category.name.toLowerCase(), category.name]));
    const usable = examples.flatMap((example) => {
      const name = names.get(example.category.trim().toLowerCase());
      return name ? [{ text: example.text, category: name }] : [];
    });
    const trained = trainModel(usable);
    const key = { accountId: scope.accountId, mode: scope.mode as Mode };
    if (!trained) {
      await em.nativeDelete(DocumentClassifierModel, key);
      return { accuracy: null, trainedOn: 0, heldOut: 0 };
    }
    await em.upsert(DocumentClassifierModel, { ...key, model: trained.model, labels: trained.labels, accuracy: trained.accuracy, trainedOn: trained.trainedOn, heldOut: trained.heldOut, trainedAt: new Date() });
    return { accuracy: trained.accuracy, trainedOn: trained.trainedOn, heldOut: trained.heldOut };
  }

  /** The stored model's record (no model bytes), or null before the first training. */
  async classifierStatus(em: EntityManager, scope: ClassificationScope): Promise<{ accuracy: number | null; trainedOn: number; heldOut: number; trainedAt: Date; labels: string[] } | null> {
    const model = await em.findOne(DocumentClassifierModel, { accountId: scope.accountId, mode: scope.mode as Mode });
    return model ? { accuracy: model.accuracy, trainedOn: model.trainedOn, heldOut: model.heldOut, trainedAt: model.trainedAt, labels: model.labels } : null;
  }

  async category(em: EntityManager, scope: ClassificationScope, id: string): Promise<DocumentCategory> {
    await this.seed(em, scope);
    const category = UUID.test(id) ? await em.findOne(DocumentCategory, { id, accountId: scope.accountId, mode: scope.mode as Mode }, { populate: ['rules'] }) : null;
    if (!category) throw new DocumentCategoryNotFoundError(id);
    return category;
  }

  async createCategory(em: EntityManager, scope: ClassificationScope, input: { name: string; rules?: DocumentCategoryRuleInput[] | null }): Promise<DocumentCategory> {
    const existing = await this.categories(em, scope);
    if (existing.length >= MAX_CATEGORIES) throw new InvalidDocumentCategoryError('name', `An account has at most ${MAX_CATEGORIES} document categories`);
    const name = cleanName(input.name);
    if (existing.some((category) => category.normalizedName === normalizeCategoryName(name))) throw new DocumentCategoryNameTakenError(name);
    const category = em.create(DocumentCategory, { accountId: scope.accountId, mode: scope.mode as Mode, name, normalizedName: normalizeCategoryName(name) });
    this.replaceRules(em, scope, category, input.rules ?? []);
    await this.flushChange(em, scope, name);
    return category;
  }

  async updateCategory(em: EntityManager, scope: ClassificationScope, id: string, input: CategoryInput): Promise<DocumentCategory> {
    const category = await this.category(em, scope, id);
    if (input.name != null) {
      const name = cleanName(input.name);
      const taken = await em.count(DocumentCategory, { accountId: scope.accountId, mode: scope.mode as Mode, normalizedName: normalizeCategoryName(name), id: { $ne: category.id } });
      if (taken) throw new DocumentCategoryNameTakenError(name);
      category.name = name;
      category.normalizedName = normalizeCategoryName(name);
    }
    if (input.rules != null) this.replaceRules(em, scope, category, input.rules);
    category.updatedAt = new Date();
    await this.flushChange(em, scope, category.name);
    return category;
  }

  /** Deletes the category and its rules; documents filed under it keep the name as their category. */
  async deleteCategory(em: EntityManager, scope: ClassificationScope, id: string): Promise<DocumentCategory> {
    const category = await this.category(em, scope, id);
    em.remove(category);
    await em.flush();
    await this.bump(em, scope);
    // The removed entity still holds its fields and loaded rules: the answer shows what was deleted.
    return category;
  }

  private replaceRules(em: EntityManager, scope: ClassificationScope, category: DocumentCategory, rules: DocumentCategoryRuleInput[]): void {
    if (rules.length > MAX_RULES_PER_CATEGORY) throw new InvalidDocumentCategoryError('rules', `A category has at most ${MAX_RULES_PER_CATEGORY} rules`);
    rules.forEach((rule, index) => {
      const problem = ruleProblem(rule);
      if (problem) throw new InvalidDocumentRuleError(`rules[${index}].pattern`, problem);
    });
    category.rules.removeAll();
    rules.forEach((rule, position) =>
      category.rules.add(
        em.create(DocumentCategoryRule, {
          accountId: scope.accountId,
          mode: scope.mode as Mode,
          category,
          position,
          kind: rule.kind,
          pattern: rule.pattern,
          caseSensitive: rule.caseSensitive ?? false,
          threshold: rule.threshold ?? null,
        }),
      ),
    );
  }

  private async flushChange(em: EntityManager, scope: ClassificationScope, name: string): Promise<void> {
    try {
      await em.flush();
    } catch (error) {
      // Two requests creating the same name at once: the unique index decides.
      if (error instanceof UniqueConstraintViolationException) throw new DocumentCategoryNameTakenError(name);
      throw error;
    }
    await this.bump(em, scope);
  }

  private async bump(em: EntityManager, scope: ClassificationScope): Promise<void> {
    await em.execute(`update ${TABLE.state} set "version" = "version" + 1 where "account_id" = ? and "mode" = ?`, [scope.accountId, scope.mode]);
  }

  /**
   * Makes the default categories and their rules once per scope. One statement claims the scope
   * (its state row) and inserts the defaults, so concurrent first uses make them once, and an
   * account that deleted them does not get them back.
   */
  private async seed(em: EntityManager, scope: ClassificationScope): Promise<void> {
    if (scope.mode !== 'live' && scope.mode !== 'test') throw new InvalidDocumentCategoryError('mode', `Unknown mode "${scope.mode}"`);
    const seeded = await em.count(DocumentCategoryState, { accountId: scope.accountId, mode: scope.mode as Mode });
    if (seeded) return;
    const rules = Object.entries(DEFAULT_CATEGORY_RULES).flatMap(([category, list]) =>
      list.map((rule, position) => ({ category, position, kind: rule.kind, pattern: rule.pattern, case_sensitive: rule.caseSensitive ?? false })),
    );
    await em.execute(
      `with claimed as (
         insert into ${TABLE.state} ("account_id", "mode", "version", "seeded_at") values (?, ?, 1, now()) on conflict do nothing returning "account_id", "mode"
       ), made as (
         insert into ${TABLE.category} ("id", "account_id", "mode", "name", "normalized_name", "created_at", "updated_at")
         select gen_random_uuid(), claimed."account_id", claimed."mode", d.name, d.name, now() + d.ord * interval '1 microsecond', now()
         from claimed cross join unnest(string_to_array(?, '|')) with ordinality as d(name, ord)
         returning "id", "account_id", "mode", "name"
       )
       insert into ${TABLE.rule} ("id", "account_id", "mode", "category_id", "position", "kind", "pattern", "case_sensitive", "threshold")
       select gen_random_uuid(), made."account_id", made."mode", made."id", r.position, r.kind, r.pattern, r.case_sensitive, null
       from made join jsonb_to_recordset(?::jsonb) as r(category text, position int, kind text, pattern text, case_sensitive boolean) on r.category = made."name"`,
      [scope.accountId, scope.mode, DEFAULT_DOCUMENT_CATEGORIES.join('|'), JSON.stringify(rules)],
    );
  }
}

function cleanName(name: string): string {
  const cleaned = name.trim().replace(/\s+/g, ' ');
  if (!cleaned) throw new InvalidDocumentCategoryError('name', 'name must not be blank');
  if (cleaned.length > 100) throw new InvalidDocumentCategoryError('name', 'name has at most 100 characters');
  if (cleaned.includes('|')) throw new InvalidDocumentCategoryError('name', 'name must not contain "|"');
  return cleaned;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
