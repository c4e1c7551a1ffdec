import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../../platform/identity/index.js';
import { createMembershipSubgraph } from '../../../subgraphs/membership/index.js';
import type { Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { createTestDatabase } from '../../support/database.js';
import { principalFor, run, TEST_SECRET } from '../../support/subgraph-harness.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let identityOrm: MikroORM;
let subgraph: Subgraph;

beforeAll(async () => {
  db = await createTestDatabase();
  identityOrm = await openIdentityStore(db.url);
  subgraph = await createMembershipSubgraph({ databaseUrl: db.url, internalSecret: TEST_SECRET, identityOrm });
});

afterAll(async () => {
  await subgraph?.close();
  await identityOrm?.close(true);
  await db?.drop();
});

const CREATE = `mutation($name: String!, $email: String!) {
  createMember(name: $name, email: $email) { id name email status joinedOn periodStart periodEnd livemode }
}`;

describe('members', () => {
  it('creates a member with a year-long period starting today', async () => {
    const result = await run(subgraph, principalFor(), CREATE, { name: 'Ada', email: 'Ada@Example.org' });
    expect(result.errors).toBeUndefined();
    const member = result.data!.createMember as Record<string, unknown>;
    expect(member).toMatchObject({ name: 'Ada', email: 'ada@example.org', status: 'ACTIVE', livemode: true });
    expect(member.periodStart).toBe(member.joinedOn);
  });
});
