import type { ExecutionResult } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInferenceSubgraph } from '../../../../subgraphs/inference/index.js';
import type { UsageEntry } from '../../../../subgraphs/inference/usage/usage-entry.js';
import { UsageRecorder } from '../../../../subgraphs/inference/usage/usage-recorder.js';
import type { Principal } from '../../../../core/principal.js';
import type { Subgraph } from '../../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../../support/subgraph-harness.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let subgraph: Subgraph;
const textKey = principalFor('usage-text', 'text');
const imageKey = principalFor('usage-image', 'image');
const admin = principalFor('usage-admin', 'admin');
const FROM = '2026-06-01T00:00:00.000Z';
const TO = '2026-06-08T00:00:00.000Z';
const seeded: (UsageEntry & { occurredAt: Date })[] = [];

const PROVIDERS = ['service-t', 'service-i', 'upstream-a'];
const MODELS = ['llama-3', 'qwen-2', 'sd-xl'];
const INTERFACES = ['service_t', 'service_i', 'gateway', 'graphql'] as const;

beforeAll(async () => {
  db = await createTestDatabase();
  subgraph = await createInferenceSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET });
  const recorder = new UsageRecorder(subgraph.orm, { logger: pino({ level: 'silent' }) });
  const start = new Date(FROM).getTime();
  const add = (entry: UsageEntry & { occurredAt: Date }) => {
    seeded.push(entry);
    recorder.record(entry);
  };
  // The text key's account: 40 calls, several sharing a millisecond (the cursor's id tie-break).
  for (let i = 0; i < 40; i++) {
    add({
      occurredAt: new Date(start + Math.floor(i / 3) * 3_600_000),
      accountId: textKey.accountId,
      keyId: textKey.keyId,
      interface: INTERFACES[i % 4],
      provider: PROVIDERS[i % 3],
      model: MODELS[(i * 7) % 3],
      promptTokens: 10 + i,
      completionTokens: (i * 13) % 50,
      latencyMs: 100 + ((i * 37) % 400),
      timeToFirstTokenMs: i % 5 === 0 ? null : 20 + i,
      streamed: i % 2 === 0,
      status: i % 9 === 0 ? 502 : 200,
      errorCode: i % 9 === 0 ? 'upstream_error' : null,
    });
  }
  for (let i = 0; i < 10; i++) {
    add({
      occurredAt: new Date(start + i * 60_000),
      accountId: imageKey.accountId,
      keyId: imageKey.keyId,
      interface: 'service_i',
      provider: 'service-i',
      model: 'sd-xl',
      promptTokens: 5,
      completionTokens: 0,
      latencyMs: 2000 + i,
      streamed: false,
      status: 200,
    });
  }
  // Keyless calls through the proxy: no account, no key, the client's address.
  for (let i = 0; i < 6; i++) {
    add({
      occurredAt: new Date(start + i * 120_000),
      clientAddress: i < 4 ? '203.0.113.7' : '::ffff:198.51.100.2',
      interface: 'proxy',
      provider: 'service-i-proxy',
      model: 'llama-3',
      promptTokens: 3,
      completionTokens: 4,
      latencyMs: 50,
      streamed: true,
      status: i === 5 ? 429 : 200,
    });
  }
  // Outside the window: never counted.
  add({ ...seeded[0], occurredAt: new Date(TO) });
  add({ ...seeded[0], occurredAt: new Date(new Date(FROM).getTime() - 1) });
  await recorder.close();
});

afterAll(async () => {
  await subgraph?.close();
  await db?.drop();
});

const inWindow = (e: { occurredAt: Date }) => e.occurredAt >= new Date(FROM) && e.occurredAt < new Date(TO);
const visibleTo = (principal: Principal) =>
  seeded.filter(inWindow).filter((e) => principal.kind === 'admin' || e.accountId === principal.accountId);

const LIST = `query($from: DateTime!, $to: DateTime!, $interface: InferenceInterface, $provider: String, $model: String, $limit: Int, $after: String) {
  inferenceUsage(from: $from, to: $to, interface: $interface, provider: $provider, model: $model, limit: $limit, after: $after) {
    data { id occurredAt accountId keyId clientAddress interface provider model promptTokens completionTokens latencyMs timeToFirstTokenMs streamed status errorCode }
    limit hasMore nextCursor
  }
}`;

interface Item {
  id: string;
  occurredAt: string;
  accountId: string | null;
  keyId: string | null;
  clientAddress: string | null;
  interface: string;
  provider: string;
  model: string;
  promptTokens: number;
  status: number;
}
interface ListAnswer {
  inferenceUsage: { data: Item[]; limit: number; hasMore: boolean; nextCursor: string | null };
}

async function walk(principal: Principal, variables: Record<string, unknown>): Promise<Item[]> {
  const items: Item[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 100; pages++) {
    const result: ExecutionResult<ListAnswer> = await run<ListAnswer>(subgraph, principal, LIST, { from: FROM, to: TO, ...variables, after });
    expect(result.errors).toBeUndefined();
    const page: ListAnswer['inferenceUsage'] = result.data!.inferenceUsage;
    items.push(...page.data);
    if (!page.hasMore) {
      expect(page.nextCursor).toBeNull();
      return items;
    }
    after = page.nextCursor;
  }
  throw new Error('paging did not end');
}

const newestFirst = (items: Item[]) =>
  [...items].sort((a, b) => new Date(b.occurredAt).getTime() - new Date(a.occurredAt).getTime() || b.id.localeCompare(a.id)).map((item) => item.id);

describe('inferenceUsage', () => {
  it("shows a text key its own account's calls only, every one once, newest first, across pages", async () => {
    const items = await walk(textKey, { limit: 7 });
    expect(items).toHaveLength(40);
    expect(new Set(items.map((item) => item.id)).size).toBe(40);
    expect(items.map((item) => item.id)).toEqual(newestFirst(items));
    expect(items.every((item) => item.accountId === textKey.accountId && item.keyId === textKey.keyId)).toBe(true);
    expect(items.reduce((sum, item) => sum + item.promptTokens, 0)).toBe(visibleTo(textKey).reduce((sum, e) => sum + e.promptTokens, 0));
  });

  it("shows an image key its own account's calls only", async () => {
    const items = await walk(imageKey, { limit: 200 });
    expect(items).toHaveLength(10);
    expect(items.every((item) => item.accountId === imageKey.accountId)).toBe(true);
  });

  it('shows an admin key every call, keyless ones with their client address', async () => {
    const items = await walk(admin, { limit: 13 });
    expect(items).toHaveLength(56);
    const keyless = items.filter((item) => item.keyId === null);
    expect(keyless).toHaveLength(6);
    expect(keyless.every((item) => item.accountId === null && item.interface === 'PROXY')).toBe(true);
    expect(new Set(keyless.map((item) => item.clientAddress))).toEqual(new Set(['203.0.113.7', '::ffff:198.51.100.2']));
  });

  it('shows keyless calls to no account key, even filtered to the proxy', async () => {
    expect(await walk(textKey, { interface: 'PROXY' })).toEqual([]);
    expect(await walk(admin, { interface: 'PROXY' })).toHaveLength(6);
  });

  it('filters by interface, provider and model', async () => {
    const items = await walk(textKey, { interface: 'GATEWAY', provider: 'service-t', limit: 3 });
    const expected = visibleTo(textKey).filter((e) => e.interface === 'gateway' && e.provider === 'service-t');
    expect(items).toHaveLength(expected.length);
    expect(items.length).toBeGreaterThan(0);
    const byModel = await walk(admin, { model: 'sd-xl', limit: 200 });
    expect(byModel).toHaveLength(visibleTo(admin).filter((e) => e.model === 'sd-xl').length);
    expect(byModel.every((item) => item.model === 'sd-xl')).toBe(true);
  });

  it("looks one record up by id within the key's scope", async () => {
    const [own] = await walk(textKey, { limit: 1 }).then((items) => items.slice(0, 1));
    const query = 'query($id: ID!) { inferenceUsageRecord(id: $id) { id keyId } }';
    expect((await run(subgraph, textKey, query, { id: own.id })).data!.inferenceUsageRecord).toEqual({ id: own.id, keyId: textKey.keyId });
    expect((await run(subgraph, imageKey, query, { id: own.id })).data!.inferenceUsageRecord).toBeNull();
    expect((await run(subgraph, admin, query, { id: own.id })).data!.inferenceUsageRecord).toEqual({ id: own.id, keyId: textKey.keyId });
    expect((await run(subgraph, admin, query, { id: 'not-a-uuid' })).data!.inferenceUsageRecord).toBeNull();
  });

  it('resolves references from other subgraphs within the key\'s scope, null for unknown ids', async () => {
    const [own] = await walk(textKey, { limit: 1 }).then((items) => items.slice(0, 1));
    const [other] = await walk(imageKey, { limit: 1 }).then((items) => items.slice(0, 1));
    const query = `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on InferenceUsageRecord { id keyId } } }`;
    const representations = [own, other, { id: '01890000-0000-7000-8000-000000000000' }].map((r) => ({ __typename: 'InferenceUsageRecord', id: r.id }));
    const asText = await run(subgraph, textKey, query, { representations });
    expect(asText.errors).toBeUndefined();
    expect(asText.data!._entities).toEqual([{ id: own.id, keyId: textKey.keyId }, null, null]);
    const asAdmin = await run(subgraph, admin, query, { representations });
    expect(asAdmin.data!._entities).toEqual([{ id: own.id, keyId: textKey.keyId }, { id: other.id, keyId: imageKey.keyId }, null]);
  });

  it('refuses a membership key: the subgraph serves text, image and admin keys', async () => {
    const result = await run(subgraph, principalFor(undefined, 'live'), LIST, { from: FROM, to: TO });
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'wrong_key_kind' });
  });
});

/** PostgreSQL's percentile_cont: linear interpolation between the closest ranks. */
function percentile(values: number[], p: number): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const position = p * (sorted.length - 1);
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
}

const SUMMARY = `query($from: DateTime!, $to: DateTime!, $groupBy: [InferenceUsageGroupBy!]!) {
  inferenceUsageSummary(from: $from, to: $to, groupBy: $groupBy) {
    from to groupBy truncated
    groups { provider model interface keyId clientAddress status requests failed promptTokens completionTokens totalTokens latencyP50Ms latencyP95Ms timeToFirstTokenP50Ms }
  }
}`;

interface Group {
  provider: string | null;
  model: string | null;
  interface: string | null;
  keyId: string | null;
  clientAddress: string | null;
  status: number | null;
  requests: number;
  failed: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  timeToFirstTokenP50Ms: number | null;
}

function figures(entries: UsageEntry[]) {
  const prompt = entries.reduce((sum, e) => sum + e.promptTokens, 0);
  const completion = entries.reduce((sum, e) => sum + e.completionTokens, 0);
  return {
    requests: entries.length,
    failed: entries.filter((e) => e.status >= 400).length,
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: prompt + completion,
    latencyP50Ms: percentile(entries.map((e) => e.latencyMs), 0.5),
    latencyP95Ms: percentile(entries.map((e) => e.latencyMs), 0.95),
    timeToFirstTokenP50Ms: percentile(entries.flatMap((e) => (e.timeToFirstTokenMs == null ? [] : [e.timeToFirstTokenMs])), 0.5),
  };
}

function expectFigures(group: Group, entries: UsageEntry[]) {
  const expected = figures(entries);
  expect(group).toMatchObject({
    requests: expected.requests,
    failed: expected.failed,
    promptTokens: expected.promptTokens,
    completionTokens: expected.completionTokens,
    totalTokens: expected.totalTokens,
  });
  for (const name of ['latencyP50Ms', 'latencyP95Ms', 'timeToFirstTokenP50Ms'] as const) {
    if (expected[name] === null) expect(group[name], name).toBeNull();
    else expect(group[name], name).toBeCloseTo(expected[name]!, 6);
  }
}

async function summary(principal: Principal, groupBy: string[]): Promise<{ groups: Group[]; truncated: boolean; groupBy: string[] }> {
  const result = await run<{ inferenceUsageSummary: { groups: Group[]; truncated: boolean; groupBy: string[] } }>(subgraph, principal, SUMMARY, {
    from: FROM,
    to: TO,
    groupBy,
  });
  expect(result.errors).toBeUndefined();
  return result.data!.inferenceUsageSummary;
}

describe('inferenceUsageSummary', () => {
  it("totals a text key's own calls without grouping: counts, token sums and latency percentiles as computed here", async () => {
    const { groups, truncated } = await summary(textKey, []);
    expect(truncated).toBe(false);
    expect(groups).toHaveLength(1);
    expectFigures(groups[0], visibleTo(textKey));
    expect(groups[0]).toMatchObject({ provider: null, model: null, interface: null, keyId: null, status: null });
  });

  it('groups by provider and model, most requests first, each group equal to the sums computed here', async () => {
    const { groups, groupBy } = await summary(textKey, ['PROVIDER', 'MODEL']);
    expect(groupBy).toEqual(['PROVIDER', 'MODEL']);
    const entries = visibleTo(textKey);
    const pairs = new Set(entries.map((e) => `${e.provider}/${e.model}`));
    expect(groups).toHaveLength(pairs.size);
    for (const group of groups) {
      expectFigures(group, entries.filter((e) => e.provider === group.provider && e.model === group.model));
      expect(group.interface).toBeNull();
    }
    expect(groups.map((g) => g.requests)).toEqual([...groups.map((g) => g.requests)].sort((a, b) => b - a));
  });

  it('groups by interface and by status', async () => {
    const entries = visibleTo(imageKey);
    const byInterface = await summary(imageKey, ['INTERFACE']);
    expect(byInterface.groups).toHaveLength(1);
    expect(byInterface.groups[0].interface).toBe('SERVICE_I');
    expectFigures(byInterface.groups[0], entries);
    const byStatus = await summary(admin, ['STATUS']);
    for (const group of byStatus.groups) expectFigures(group, visibleTo(admin).filter((e) => e.status === group.status));
    expect(byStatus.groups.map((g) => g.status).sort()).toEqual([200, 429, 502]);
  });

  it('gives an admin every account and the keyless calls, grouped by key or, without one, by client address', async () => {
    const { groups } = await summary(admin, ['KEY']);
    const all = visibleTo(admin);
    expect(groups.reduce((sum, g) => sum + g.requests, 0)).toBe(all.length);
    expect(groups.map((g) => [g.keyId, g.clientAddress, g.requests])).toEqual([
      [textKey.keyId, null, 40],
      [imageKey.keyId, null, 10],
      [null, '203.0.113.7', 4],
      [null, '::ffff:198.51.100.2', 2],
    ]);
    expectFigures(groups[2], all.filter((e) => e.clientAddress === '203.0.113.7'));
  });

  it('shows an account key nothing of other accounts or of keyless calls', async () => {
    const { groups } = await summary(imageKey, ['KEY']);
    expect(groups.map((g) => g.keyId)).toEqual([imageKey.keyId]);
  });

  it('answers one empty total for a window without calls, and no groups when grouped', async () => {
    const empty = await run<{ inferenceUsageSummary: { groups: Group[] } }>(subgraph, textKey, SUMMARY, {
      from: '2020-01-01T00:00:00Z',
      to: '2020-01-02T00:00:00Z',
      groupBy: [],
    });
    expect(empty.data!.inferenceUsageSummary.groups).toEqual([
      expect.objectContaining({ requests: 0, failed: 0, promptTokens: 0, totalTokens: 0, latencyP50Ms: null, latencyP95Ms: null }),
    ]);
    const grouped = await run<{ inferenceUsageSummary: { groups: Group[] } }>(subgraph, textKey, SUMMARY, {
      from: '2020-01-01T00:00:00Z',
      to: '2020-01-02T00:00:00Z',
      groupBy: ['MODEL'],
    });
    expect(grouped.data!.inferenceUsageSummary.groups).toEqual([]);
  });
});

describe('argument validation', () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ['from equal to to', LIST, { from: FROM, to: FROM }, 'to'],
    ['from after to', LIST, { from: TO, to: FROM }, 'to'],
    ['a window over 90 days', LIST, { from: '2026-01-01T00:00:00Z', to: '2026-04-01T00:00:01Z' }, 'from'],
    ['limit 0', LIST, { from: FROM, to: TO, limit: 0 }, 'limit'],
    ['limit 201', LIST, { from: FROM, to: TO, limit: 201 }, 'limit'],
    ['a cursor this API did not issue', LIST, { from: FROM, to: TO, after: 'bm90LWEtY3Vyc29y' }, 'after'],
    ['an empty provider', LIST, { from: FROM, to: TO, provider: '' }, 'provider'],
    ['a summary window the wrong way round', SUMMARY, { from: TO, to: FROM, groupBy: [] }, 'to'],
    ['a summary window over 90 days', SUMMARY, { from: '2026-01-01T00:00:00Z', to: '2026-06-01T00:00:00Z', groupBy: ['MODEL'] }, 'from'],
  ];
  it.each(cases)('refuses %s with BAD_USER_INPUT naming the parameter', async (_name, query, variables, param) => {
    const result = await run(subgraph, textKey, query, variables);
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param });
  });

  it('accepts exactly 90 days and limit 200', async () => {
    const result = await run<ListAnswer>(subgraph, textKey, LIST, { from: '2026-03-10T00:00:00Z', to: '2026-06-08T00:00:00Z', limit: 200 });
    expect(result.errors).toBeUndefined();
    expect(result.data!.inferenceUsage).toMatchObject({ limit: 200, hasMore: false });
    expect(result.data!.inferenceUsage.data).toHaveLength(41);
  });
});

describe('indexes', () => {
  it.each([
    ['an account key', 'u.account_id = ?', [textKey.accountId], 'account_id_occurred_at_id_idx'],
    ['an admin key', 'true', [], 'occurred_at_id_idx'],
    ['an admin key by provider and model', "u.provider = 'service-t' and u.model = 'llama-3'", [], 'provider_model_occurred_at_id_idx'],
  ])('serve a page for %s newest first by a backward index scan, without sorting', async (_name, condition, params, index) => {
    const plan = await subgraph.orm.em.fork().transactional(async (em) => {
      const connection = em.getConnection();
      const ctx = em.getTransactionContext();
      // The test table is small enough for a sequential scan; what matters is that the index can serve the page.
      await connection.execute('set local enable_seqscan = off', [], 'run', ctx);
      const rows = await connection.execute<{ 'QUERY PLAN': string }[]>(
        `explain select u.id from "inference"."usage_record" u where u.occurred_at >= ? and u.occurred_at < ? and ${condition}
           and (u.occurred_at, u.id) < (?, ?) order by u.occurred_at desc, u.id desc limit 51`,
        [FROM, TO, ...params, TO, 'ffffffff-ffff-7fff-bfff-ffffffffffff'],
        'all',
        ctx,
      );
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(new RegExp(`Index (Only )?Scan Backward using \\w*${index}`));
    expect(plan).not.toContain('Sort');
  });
});

describe('schema', () => {
  it('has migrations that match the entities exactly', async () => {
    expect(await subgraph.orm.schema.getUpdateSchemaSQL({ wrap: false, schema: 'inference' })).toBe('');
  });
});
