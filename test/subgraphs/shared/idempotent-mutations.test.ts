import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/logger.js';
import { signPrincipal, PRINCIPAL_HEADER, type Principal } from '../../../core/principal.js';
import { IDEMPOTENCY_KEY_HEADER } from '../../../core/idempotency.js';
import type { RunningService } from '../../../core/listen.js';
import { serveSubgraph } from '../../../subgraphs/shared/server.js';
import { startMembershipSubgraph, type MembershipTestbed } from '../../support/membership-subgraph.js';
import { principalFor, TEST_SECRET } from '../../support/subgraph-harness.js';

let testbed: MembershipTestbed;
let service: RunningService;
let principal: Principal;
let memberId: string;

const CREATE_INVOICE = `mutation ($memberId: ID!, $description: String) {
  createInvoice(memberId: $memberId, currency: "EUR", lines: [{ description: "Dues", unitAmount: 2500 }], description: $description) { id number total }
}`;
const CREATE_CATEGORY = `mutation ($name: String!) {
  createMemberCategory(name: $name, feeAmount: 1000, currency: "EUR", period: YEARLY) { id name }
}`;

/** One fetch as the gateway sends it: the signed principal, and the key when given. */
async function send(query: string, variables: Record<string, unknown>, key?: string) {
  const response = await fetch(service.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [PRINCIPAL_HEADER]: signPrincipal(principal, TEST_SECRET),
      ...(key ? { [IDEMPOTENCY_KEY_HEADER]: key } : {}),
    },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, replayed: response.headers.get('idempotent-replayed'), body: (await response.json()) as { data?: Record<string, { id: string } | null> | null; errors?: { message: string; extensions?: { code?: string; reason?: string } }[] } };
}

async function count(table: string, where = 'true', params: unknown[] = []): Promise<number> {
  const rows = await testbed.subgraph.orm.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from "membership"."${table}" where ${where}`, params);
  return rows[0].n;
}

const invoicesDescribed = (description: string) => count('invoice', '"description" = ?', [description]);

beforeAll(async () => {
  testbed = await startMembershipSubgraph();
  service = await serveSubgraph(testbed.subgraph, { port: 0, logger: createLogger('silent', 'membership') });
  principal = principalFor('idem');
  const created = await send(`mutation { createMember(name: "Ada", email: "ada@example.org") { id } }`, {});
  memberId = created.body.data!.createMember!.id;
});

afterAll(async () => {
  await service?.stop();
  await testbed?.close();
});

describe('a mutation with the edge\'s Idempotency-Key', () => {
  it('runs once; a retry replays the committed answer, marked as replayed', async () => {
    const first = await send(CREATE_INVOICE, { memberId, description: 'once' }, 'key-once');
    expect(first.body.errors).toBeUndefined();
    expect(first.replayed).toBeNull();
    const retry = await send(CREATE_INVOICE, { memberId, description: 'once' }, 'key-once');
    expect(retry.replayed).toBe('true');
    expect(retry.body).toEqual(first.body);
    expect(await invoicesDescribed('once')).toBe(1);
    // The answer was kept in the transaction that wrote the invoice.
    expect(await count('idempotent_outcome', '"key" = ?', ['key-once'])).toBe(1);
  });

  it('sent twenty times at once writes once: the others wait on its row and replay it', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(CREATE_INVOICE, { memberId, description: 'burst' }, 'key-burst')));
    expect(await invoicesDescribed('burst')).toBe(1);
    const ids = new Set(answers.map((a) => a.body.data?.createInvoice?.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.replayed === null)).toHaveLength(1);
  });

  it('with other variables is another fetch: it runs', async () => {
    await send(CREATE_INVOICE, { memberId, description: 'a' }, 'key-shared');
    await send(CREATE_INVOICE, { memberId, description: 'b' }, 'key-shared');
    expect(await invoicesDescribed('a')).toBe(1);
    expect(await invoicesDescribed('b')).toBe(1);
  });

  it('belongs to its account and mode: another account\'s same key runs its own', async () => {
    const own = principal;
    await send(CREATE_CATEGORY, { name: 'Scoped' }, 'key-scope');
    principal = principalFor('other');
    try {
      const other = await send(CREATE_CATEGORY, { name: 'Scoped' }, 'key-scope');
      expect(other.replayed).toBeNull();
      expect(other.body.errors).toBeUndefined();
    } finally {
      principal = own;
    }
    expect(await count('member_category', '"name" = ?', ['Scoped'])).toBe(2);
  });

  it('keeps a domain refusal and replays it, with nothing written', async () => {
    const refused = await send(CREATE_INVOICE, { memberId: '00000000-0000-4000-8000-00000000dead', description: 'refused' }, 'key-refused');
    expect(refused.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const retry = await send(CREATE_INVOICE, { memberId: '00000000-0000-4000-8000-00000000dead', description: 'refused' }, 'key-refused');
    expect(retry.replayed).toBe('true');
    expect(retry.body).toEqual(refused.body);
    expect(await invoicesDescribed('refused')).toBe(0);
  });

  it('whose statement failed inside the transaction answers the domain error, keeps it, and commits nothing of it', async () => {
    expect((await send(CREATE_CATEGORY, { name: 'Taken' }, undefined)).body.errors).toBeUndefined();
    // The second insert fails on the unique name in the request's transaction (a plain flush, no savepoint of its own).
    const taken = await send(CREATE_CATEGORY, { name: 'Taken' }, 'key-taken');
    expect(taken.body.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(taken.body.data ?? null).toBeNull();
    const retry = await send(CREATE_CATEGORY, { name: 'Taken' }, 'key-taken');
    expect(retry.replayed).toBe('true');
    expect(retry.body).toEqual(taken.body);
    expect(await count('member_category', '"name" = ?', ['Taken'])).toBe(1);
  });

  it('refused to the caller before it ran (FORBIDDEN) is not kept: an allowed retry with the key runs', async () => {
    const own = principal;
    principal = { ...own, kind: 'text' };
    try {
      const refused = await send(CREATE_INVOICE, { memberId, description: 'refused-kind' }, 'key-forbidden');
      expect(refused.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    } finally {
      principal = own;
    }
    expect(await count('idempotent_outcome', '"key" = ?', ['key-forbidden'])).toBe(0);
    const allowed = await send(CREATE_INVOICE, { memberId, description: 'refused-kind' }, 'key-forbidden');
    expect(allowed.replayed).toBeNull();
    expect(allowed.body.errors).toBeUndefined();
    expect(await invoicesDescribed('refused-kind')).toBe(1);
  });

  it('an expired outcome counts as absent: the request runs again', async () => {
    await send(CREATE_INVOICE, { memberId, description: 'expired' }, 'key-expired');
    await testbed.subgraph.orm.em.fork().execute(`update "membership"."idempotent_outcome" set "created_at" = now() - interval '25 hours' where "key" = 'key-expired'`);
    const again = await send(CREATE_INVOICE, { memberId, description: 'expired' }, 'key-expired');
    expect(again.replayed).toBeNull();
    expect(await invoicesDescribed('expired')).toBe(2);
  });
});

describe('what the key leaves alone', () => {
  it('a mutation without the key runs every time and keeps nothing', async () => {
    await send(CREATE_INVOICE, { memberId, description: 'unkeyed' });
    await send(CREATE_INVOICE, { memberId, description: 'unkeyed' });
    expect(await invoicesDescribed('unkeyed')).toBe(2);
  });

  it('a query with the key is answered fresh and keeps nothing', async () => {
    const before = await count('idempotent_outcome');
    const query = `query ($id: ID!) { member(id: $id) { id name } }`;
    const first = await send(query, { id: memberId }, 'key-query');
    expect(first.body.data?.member?.id).toBe(memberId);
    expect((await send(query, { id: memberId }, 'key-query')).replayed).toBeNull();
    expect(await count('idempotent_outcome')).toBe(before);
  });
});
