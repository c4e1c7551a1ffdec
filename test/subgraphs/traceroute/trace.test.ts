import type { MikroORM } from '@mikro-orm/postgresql';
import { openIdentityStore } from '../../../platform/identity/index.js';
import { randomUUID } from 'node:crypto';
import { CheckConstraintViolationException } from '@mikro-orm/core';
import type { ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { createTracerouteSubgraph } from '../../../subgraphs/traceroute/index.js';
import { TraceDirection } from '../../../subgraphs/traceroute/trace/trace-direction.js';
import { TraceStatus } from '../../../subgraphs/traceroute/trace/trace-status.js';
import { TraceService, type TraceRecord } from '../../../subgraphs/traceroute/trace/trace.service.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;
const statements: string[] = [];

const DIRECTIONS = Object.values(TraceDirection);
const BASE = Date.parse('2026-11-01T12:00:00.000Z');

/**
 * 65 traces over 20 distinct measurement times, so most times are shared by three or four
 * traces and page boundaries fall between equal measuredAt values. Stored out of order.
 */
const SEED: (TraceRecord & { id: string })[] = Array.from({ length: 65 }, (_, i) => ({
  id: randomUUID(),
  direction: DIRECTIONS[i % DIRECTIONS.length],
  probeCity: i % 2 ? 'Lahore' : 'Frankfurt',
  probeCountry: i % 2 ? 'PK' : 'DE',
  probeAsn: 17557 + i,
  targetDomain: i % 3 ? `host${i}.example.pk` : null,
  targetIp: `203.0.113.${i}`,
  targetCity: i % 3 ? 'Karachi' : null,
  anomalyScore: (i % 11) / 10,
  status: i % 5 === 0 ? TraceStatus.FAILED : TraceStatus.COMPLETED,
  measuredAt: new Date(BASE - ((i * 7) % 20) * 60_000),
}));

/** The order the API promises: newest measurement first, then the larger id. */
function expectedOrder(traces: typeof SEED): string[] {
  return [...traces]
    .sort((a, b) => b.measuredAt.getTime() - a.measuredAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((t) => t.id);
}

const TRACES = `query($direction: TraceDirection, $status: TraceStatus, $limit: Int, $after: String) {
  traces(direction: $direction, status: $status, limit: $limit, after: $after) {
    data { id direction status measuredAt }
    hasMore
    nextCursor
  }
}`;

interface TracesData {
  traces: {
    data: { id: string; direction: string; status: string; measuredAt: Date }[];
    hasMore: boolean;
    nextCursor: string | null;
  };
}

/** Follows nextCursor to the end and returns every id seen, in order, with the page count. */
async function readAllPages(variables: Record<string, unknown>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let after: string | null = null;
  let pages = 0;
  do {
    const result: ExecutionResult<TracesData> = await run<TracesData>(subgraph, principalFor(), TRACES, {
      ...variables,
      after,
    });
    expect(result.errors).toBeUndefined();
    const page: TracesData['traces'] = result.data!.traces;
    pages++;
    ids.push(...page.data.map((t) => t.id));
    expect(page.hasMore).toBe(page.nextCursor !== null);
    after = page.nextCursor;
  } while (after && pages < 100);
  return { ids, pages };
}

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  subgraph = await createTracerouteSubgraph({
    databaseUrl: db.url,
    internalSecret: TEST_SECRET,
    identityOrm,
    onQuery: (sql) => statements.push(sql),
  });
  await new TraceService(subgraph.orm.em.fork()).record(SEED);
});

afterAll(async () => {
  await subgraph?.close();
  await identityOrm?.close(true);
  await db?.drop();
});

describe('traces', () => {
  it('returns the 50 most recently measured traces by default', async () => {
    const result = await run<TracesData>(subgraph, principalFor(), TRACES);
    expect(result.errors).toBeUndefined();
    const page = result.data!.traces;
    expect(page.data.map((t) => t.id)).toEqual(expectedOrder(SEED).slice(0, 50));
    expect(page.hasMore).toBe(true);
    expect(page.nextCursor).toEqual(expect.any(String));
  });

  it('pages through traces with equal measuredAt values without skipping or repeating any', async () => {
    const { ids, pages } = await readAllPages({ limit: 7 });
    expect(ids).toEqual(expectedOrder(SEED));
    expect(pages).toBe(Math.ceil(SEED.length / 7));
  });

  it('filters by direction and status, across pages', async () => {
    const { ids } = await readAllPages({ direction: 'CROSS_ISP', status: 'COMPLETED', limit: 3 });
    const expected = expectedOrder(
      SEED.filter((t) => t.direction === TraceDirection.CROSS_ISP && t.status === TraceStatus.COMPLETED),
    );
    expect(expected.length).toBeGreaterThan(3);
    expect(ids).toEqual(expected);
  });

  it('reports direction and status as enum values', async () => {
    const result = await run<TracesData>(subgraph, principalFor(), TRACES, { status: 'FAILED', limit: 200 });
    expect(result.errors).toBeUndefined();
    const failed = result.data!.traces.data;
    expect(failed).toHaveLength(SEED.filter((t) => t.status === TraceStatus.FAILED).length);
    expect(new Set(failed.map((t) => t.status))).toEqual(new Set(['FAILED']));
    expect(new Set(failed.map((t) => t.direction))).toEqual(new Set(['OUTSIDE_TO_PK', 'PK_TO_OUTSIDE', 'CROSS_ISP', 'WITHIN_ISP']));
  });

  it('accepts limits of 1 and 200', async () => {
    for (const limit of [1, 200]) {
      const result = await run<TracesData>(subgraph, principalFor(), TRACES, { limit });
      expect(result.errors).toBeUndefined();
      expect(result.data!.traces.data).toHaveLength(Math.min(limit, SEED.length));
    }
  });

  it.each([0, 201, -5])('rejects limit %i as BAD_USER_INPUT', async (limit) => {
    const result = await run(subgraph, principalFor(), TRACES, { limit });
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', param: 'limit' });
  });

  it.each([
    ['garbage', 'not a cursor'],
    ['a cursor with a bad id', Buffer.from(JSON.stringify(['2026-11-01T12:00:00.000Z', 'x'])).toString('base64url')],
    ['a cursor with a bad date', Buffer.from(JSON.stringify(['yesterday', randomUUID()])).toString('base64url')],
  ])('rejects %s as BAD_USER_INPUT', async (_name, after) => {
    const result = await run(subgraph, principalFor(), TRACES, { after });
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'invalid_cursor' });
  });

  it('seeks past the cursor with a row comparison, which the (measured_at, id) index serves', async () => {
    const first = await run<TracesData>(subgraph, principalFor(), TRACES, { limit: 60 });
    statements.length = 0;
    await run(subgraph, principalFor(), TRACES, { limit: 2, after: first.data!.traces.nextCursor });
    const selects = statements.filter((sql) => sql.includes('from "traceroute"."trace"'));
    expect(selects).toHaveLength(1);
    expect(selects[0]).toContain('(t.measured_at, t.id) < (?, ?)');
  });
});

describe('trace', () => {
  const QUERY = `query($id: ID!) { trace(id: $id) {
    id direction probeCity probeCountry probeAsn targetDomain targetIp targetCity anomalyScore status measuredAt createdAt
  } }`;

  it('returns one trace with every field', async () => {
    const seeded = SEED[4];
    const result = await run(subgraph, principalFor(), QUERY, { id: seeded.id });
    expect(result.errors).toBeUndefined();
    expect(result.data!.trace).toEqual({
      id: seeded.id,
      direction: 'OUTSIDE_TO_PK',
      probeCity: 'Frankfurt',
      probeCountry: 'DE',
      probeAsn: 17561,
      targetDomain: 'host4.example.pk',
      targetIp: '203.0.113.4',
      targetCity: 'Karachi',
      anomalyScore: 0.4,
      status: 'COMPLETED',
      // graphql-scalars' DateTime serialises to a Date; JSON turns it into the ISO string.
      measuredAt: seeded.measuredAt,
      createdAt: expect.any(Date),
    });
  });

  it('returns null targets where the measurement has none', async () => {
    const result = await run(subgraph, principalFor(), QUERY, { id: SEED[0].id });
    expect(result.data!.trace).toMatchObject({ targetDomain: null, targetCity: null, anomalyScore: 0, status: 'FAILED' });
  });

  it('answers null for an unknown id', async () => {
    const result = await run(subgraph, principalFor(), QUERY, { id: randomUUID() });
    expect(result.errors).toBeUndefined();
    expect(result.data!.trace).toBeNull();
  });

  it('answers null for an id that is not a uuid', async () => {
    const result = await run(subgraph, principalFor(), QUERY, { id: 'not-a-uuid' });
    expect(result.errors).toBeUndefined();
    expect(result.data!.trace).toBeNull();
  });

  it('shows the same traces to every principal: traces are public', async () => {
    const a = await run(subgraph, principalFor('acct-a', 'traceroute'), QUERY, { id: SEED[1].id });
    const b = await run(subgraph, principalFor('acct-b', 'test'), QUERY, { id: SEED[1].id });
    expect(a.data!.trace).not.toBeNull();
    expect(b.data!.trace).toEqual(a.data!.trace);
  });

  it('resolves references from other subgraphs in one statement, null for unknown or malformed ids', async () => {
    statements.length = 0;
    const result = await run(
      subgraph,
      principalFor(),
      `query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Trace { id probeAsn } } }`,
      {
        representations: [
          { __typename: 'Trace', id: SEED[5].id },
          { __typename: 'Trace', id: randomUUID() },
          { __typename: 'Trace', id: 'nope' },
          { __typename: 'Trace', id: SEED[6].id },
        ],
      },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data!._entities).toEqual([{ id: SEED[5].id, probeAsn: 17562 }, null, null, { id: SEED[6].id, probeAsn: 17563 }]);
    expect(statements.filter((sql) => sql.includes('from "traceroute"."trace"'))).toHaveLength(1);
  });
});

describe('record', () => {
  it('refuses an anomaly score outside 0..1', async () => {
    const trace: TraceRecord = { ...SEED[0], id: randomUUID(), anomalyScore: 1.5 };
    await expect(new TraceService(subgraph.orm.em.fork()).record([trace])).rejects.toThrow(CheckConstraintViolationException);
    const result = await run(subgraph, principalFor(), `query($id: ID!) { trace(id: $id) { id } }`, { id: trace.id });
    expect(result.data!.trace).toBeNull();
  });
});

describe('schema', () => {
  it('has migrations that match the entities exactly', async () => {
    expect(await subgraph.orm.schema.getUpdateSchemaSQL({ wrap: false, schema: subgraph.orm.config.get('schema') })).toBe('');
  });
});
