import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../../support/platform-harness.js';

/** Categories and rules through the edge, as a client edits them: REST and GraphQL. */
let platform: TestPlatform;

beforeAll(async () => {
  platform = await startTestPlatform();
}, 60_000);

afterAll(async () => {
  await platform?.close();
});

interface RuleBody {
  id: string;
  kind: string;
  pattern: string;
  caseSensitive: boolean;
  threshold: number | null;
}
interface CategoryBody {
  id: string;
  name: string;
  livemode: boolean;
  createdAt: string;
  updatedAt: string;
  rules: RuleBody[];
}

let accounts = 0;
const freshKey = (kind: 'live' | 'test' = 'test') => platform.issueKey(`doc-categories-${++accounts}`, kind);

async function body<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function expectError(response: Response, status: number, code: string, param: string | null = null) {
  const parsed = await body<{ error: Record<string, unknown> }>(response, status);
  expect(parsed.error).toMatchObject({ code, param });
  return parsed.error;
}

async function graphql<T>(key: string, query: string, variables?: Record<string, unknown>) {
  const response = await platform.request('/graphql', { method: 'POST', key, json: { query, variables } });
  return body<{ data?: T; errors?: { message: string; extensions?: Record<string, unknown> }[] }>(response, 200);
}

describe('document categories over REST', () => {
  it('GET /documents/categories lists the eight defaults, rules included', async () => {
    const key = await freshKey();
    const page = await body<{ data: CategoryBody[]; hasMore: boolean; nextCursor: string | null }>(await platform.request('/api/v1/documents/categories', { key }), 200);
    expect(page).toMatchObject({ hasMore: false, nextCursor: null });
    const list = page.data;
    expect(list.map((c) => c.name)).toEqual(['invoice', 'receipt', 'contract', 'resume', 'identity document', 'letter', 'report', 'other']);
    expect(list[0]).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'invoice', livemode: false, createdAt: expect.any(String), updatedAt: expect.any(String), rules: expect.any(Array) });
    expect(list[0].rules[0]).toEqual({ id: expect.any(String), kind: 'ANY', pattern: 'invoice rechnung facture factura fattura', caseSensitive: false, threshold: null });
    expect(list.find((c) => c.name === 'other')!.rules).toEqual([]);
  });

  it('POST creates (201) with its rules shown whole; GET /{id}, PUT and DELETE follow', async () => {
    const key = await freshKey();
    const created = await body<CategoryBody>(
      await platform.request('/api/v1/documents/categories', {
        method: 'POST',
        key,
        json: { name: 'Tax', rules: [{ kind: 'ANY', pattern: 'tax irs' }, { kind: 'FUZZY', pattern: 'income tax', threshold: 0.75 }] },
      }),
      201,
    );
    expect(created).toMatchObject({ name: 'Tax', livemode: false });
    expect(created.rules).toEqual([
      { id: expect.any(String), kind: 'ANY', pattern: 'tax irs', caseSensitive: false, threshold: null },
      { id: expect.any(String), kind: 'FUZZY', pattern: 'income tax', caseSensitive: false, threshold: 0.75 },
    ]);
    expect(await body(await platform.request(`/api/v1/documents/categories/${created.id}`, { key }), 200)).toEqual(created);

    const updated = await body<CategoryBody>(
      await platform.request(`/api/v1/documents/categories/${created.id}`, { method: 'PUT', key, json: { name: 'Taxes', rules: [{ kind: 'REGEX', pattern: 'form\\s+10\\d{2}', caseSensitive: true }] } }),
      200,
    );
    expect(updated).toMatchObject({ id: created.id, name: 'Taxes', rules: [{ kind: 'REGEX', pattern: 'form\\s+10\\d{2}', caseSensitive: true, threshold: null }] });

    const deleted = await body<CategoryBody>(await platform.request(`/api/v1/documents/categories/${created.id}`, { method: 'DELETE', key }), 200);
    expect(deleted).toMatchObject({ id: created.id, name: 'Taxes' });
    await expectError(await platform.request(`/api/v1/documents/categories/${created.id}`, { key }), 404, 'document_category_not_found', 'id');
    await expectError(await platform.request(`/api/v1/documents/categories/${created.id}`, { method: 'DELETE', key }), 404, 'document_category_not_found', 'id');
    const page = await body<{ data: CategoryBody[]; hasMore: boolean; nextCursor: string | null }>(await platform.request('/api/v1/documents/categories', { key }), 200);
    expect(page).toMatchObject({ hasMore: false, nextCursor: null });
    const list = page.data;
    expect(list.map((c) => c.name)).not.toContain('Taxes');
  });

  it('a duplicate name in any case is 409 document_category_name_taken', async () => {
    const key = await freshKey();
    await expectError(await platform.request('/api/v1/documents/categories', { method: 'POST', key, json: { name: 'Invoice' } }), 409, 'document_category_name_taken', 'name');
  });

  it('a regex that could backtrack without end is 400 invalid_document_rule with the reason', async () => {
    const key = await freshKey();
    const error = await expectError(
      await platform.request('/api/v1/documents/categories', { method: 'POST', key, json: { name: 'Evil', rules: [{ kind: 'REGEX', pattern: '(a+)+$' }] } }),
      400,
      'invalid_document_rule',
      'rules[0].pattern',
    );
    expect(error.message).toMatch(/nested quantifiers/);
    await expectError(
      await platform.request('/api/v1/documents/categories', { method: 'POST', key, json: { name: 'Broken', rules: [{ kind: 'REGEX', pattern: '[unclosed' }] } }),
      400,
      'invalid_document_rule',
      'rules[0].pattern',
    );
    await expectError(await platform.request('/api/v1/documents/categories', { method: 'POST', key, json: { name: 'Bad kind', rules: [{ kind: 'SOMETIMES', pattern: 'x' }] } }), 400, 'invalid_parameter', expect.anything() as never);
  });

  it('categories of one account and mode are invisible to another', async () => {
    const key = await freshKey('test');
    const mine = await body<CategoryBody>(await platform.request('/api/v1/documents/categories', { method: 'POST', key, json: { name: 'Private' } }), 201);
    const other = await freshKey('test');
    await expectError(await platform.request(`/api/v1/documents/categories/${mine.id}`, { key: other }), 404, 'document_category_not_found', 'id');
    await expectError(await platform.request(`/api/v1/documents/categories/${mine.id}`, { method: 'PUT', key: other, json: { name: 'Mine now' } }), 404, 'document_category_not_found', 'id');
  });

  it('GET /documents/{id} still answers documents: "categories" is not taken for an id elsewhere', async () => {
    const key = await freshKey();
    await expectError(await platform.request('/api/v1/documents/00000000-0000-4000-8000-ffffffffffff', { key }), 404, 'document_not_found', 'id');
  });
});

describe('GET /documents/categories pages like every list', () => {
  it('answers {data, hasMore, nextCursor}, oldest first, limit pages of it, after continues, and refuses a bad cursor or limit', async () => {
    const key = await freshKey();
    for (let i = 1; i <= 17; i++) await body(await platform.request('/api/v1/documents/categories', { method: 'POST', key, json: { name: `Extra ${String(i).padStart(2, '0')}` } }), 201);
    const all: CategoryBody[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const query: string = `limit=10${after ? `&after=${encodeURIComponent(after)}` : ''}`;
      const page = await body<{ data: CategoryBody[]; hasMore: boolean; nextCursor: string | null }>(await platform.request(`/api/v1/documents/categories?${query}`, { key }), 200);
      expect(page.data.length).toBeLessThanOrEqual(10);
      expect(page.hasMore).toBe(page.nextCursor !== null);
      all.push(...page.data);
      after = page.nextCursor;
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(all.map((c) => c.name)).toEqual(['invoice', 'receipt', 'contract', 'resume', 'identity document', 'letter', 'report', 'other', ...Array.from({ length: 17 }, (_, i) => `Extra ${String(i + 1).padStart(2, '0')}`)]);
    // A page whose last category was deleted meanwhile still continues after it.
    const first = await body<{ data: CategoryBody[]; nextCursor: string }>(await platform.request('/api/v1/documents/categories?limit=9', { key }), 200);
    await body(await platform.request(`/api/v1/documents/categories/${first.data[8].id}`, { method: 'DELETE', key }), 200);
    const next = await body<{ data: CategoryBody[] }>(await platform.request(`/api/v1/documents/categories?limit=2&after=${encodeURIComponent(first.nextCursor)}`, { key }), 200);
    expect(next.data.map((c) => c.name)).toEqual(['Extra 02', 'Extra 03']);
    await expectError(await platform.request('/api/v1/documents/categories?after=bm90LWEtY3Vyc29y', { key }), 400, 'invalid_cursor', 'after');
    await expectError(await platform.request('/api/v1/documents/categories?limit=101', { key }), 400, 'invalid_parameter', 'limit');
  });
});

describe('document categories over GraphQL', () => {
  it('documentCategories, createDocumentCategory, updateDocumentCategory and deleteDocumentCategory', async () => {
    const key = await freshKey('live');
    const fields = 'id name livemode rules { kind pattern caseSensitive threshold }';
    const list = await graphql<{ documentCategories: { data: { name: string; livemode: boolean }[]; hasMore: boolean } }>(key, `{ documentCategories { data { ${fields} } hasMore } }`);
    expect(list.data!.documentCategories.data).toHaveLength(8);
    expect(list.data!.documentCategories.data[0].livemode).toBe(true);

    const created = await graphql<{ createDocumentCategory: { id: string; name: string } }>(key, `mutation($rules: [DocumentCategoryRuleInput!]) { createDocumentCategory(name: "Medical", rules: $rules) { ${fields} } }`, {
      rules: [{ kind: 'ALL', pattern: 'patient diagnosis' }],
    });
    expect(created.data!.createDocumentCategory).toMatchObject({ name: 'Medical', rules: [{ kind: 'ALL', pattern: 'patient diagnosis', caseSensitive: false, threshold: null }] });
    const id = created.data!.createDocumentCategory.id;

    const duplicate = await graphql(key, 'mutation { createDocumentCategory(name: "MEDICAL") { id } }');
    expect(duplicate.errors![0].extensions).toMatchObject({ code: 'CONFLICT', reason: 'document_category_name_taken' });

    const badRule = await graphql(key, `mutation { updateDocumentCategory(id: "${id}", rules: [{ kind: REGEX, pattern: "(x)\\\\1" }]) { id } }`);
    expect(badRule.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_document_rule', param: 'rules[0].pattern' });

    const renamed = await graphql<{ updateDocumentCategory: { name: string; rules: unknown[] } }>(key, `mutation { updateDocumentCategory(id: "${id}", name: "Health", rules: []) { ${fields} } }`);
    expect(renamed.data!.updateDocumentCategory).toMatchObject({ name: 'Health', rules: [] });

    const deleted = await graphql<{ deleteDocumentCategory: { id: string; name: string } }>(key, `mutation { deleteDocumentCategory(id: "${id}") { id name } }`);
    expect(deleted.data!.deleteDocumentCategory).toEqual({ id, name: 'Health' });
    const gone = await graphql<{ documentCategory: null }>(key, `{ documentCategory(id: "${id}") { id } }`);
    expect(gone.data!.documentCategory).toBeNull();
  });
});
