import { graphql } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../core/principal.js';
import { SUBGRAPH_PARTS } from '../../../schema/subgraph-catalog.js';
import { MinimumRole, enforceMutationRoles, type DashboardRole } from '../../../subgraphs/shared/mutation-roles.js';
import { buildFederatedSchema } from '../../../subgraphs/shared/schema.js';
import { createSubgraph, type Subgraph } from '../../../subgraphs/shared/subgraph.js';
import { Mutation, Query, Resolver } from '../../../subgraphs/shared/type-graphql.js';
import { createTestDatabase } from '../../support/database.js';
import { mutationCallsOf, sessionKindFor } from '../../support/mutation-calls.js';
import { principalFor, TEST_SECRET } from '../../support/subgraph-harness.js';

const asUser = (principal: Principal, role: DashboardRole): Principal => ({ ...principal, user: { id: '7f0c0000-0000-4000-8000-000000000001', role } });

describe('a viewer is refused every mutation of every subgraph before any SQL statement', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  const statements: string[] = [];
  const subgraphs: Subgraph[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    // Each subgraph as createSubgraph builds it (its ORM migrated, its schema guarded), with no
    // worker of its own running: every statement counted is one a request made.
    for (const part of SUBGRAPH_PARTS) {
      subgraphs.push(await createSubgraph(part, { databaseUrl: db.url, internalSecret: TEST_SECRET, onQuery: (sql) => statements.push(sql) }));
    }
  });
  afterAll(async () => {
    for (const subgraph of subgraphs) await subgraph.close();
    await db?.drop();
  });

  it('answers FORBIDDEN, reason insufficient_role, with no statement run', async () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const [index, part] of SUBGRAPH_PARTS.entries()) {
      const subgraph = subgraphs[index];
      for (const call of mutationCallsOf(subgraph.schema)) {
        const viewer = asUser(principalFor('acme', sessionKindFor(part, call.field)), 'viewer');
        statements.length = 0;
        const result = await graphql({ schema: subgraph.schema, source: call.query, variableValues: call.variables, contextValue: subgraph.contextFor(viewer) });
        const error = result.errors?.[0];
        if (error?.extensions.code !== 'FORBIDDEN' || error.extensions.reason !== 'insufficient_role' || statements.length > 0) {
          wrong.push(`${part.name} ${call.field}: ${error?.message ?? 'no error'}; ${statements.length} statements`);
        }
        checked += 1;
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(60);
  });
});

@Resolver()
class RoleProbeResolver {
  static ran: string[] = [];

  @Query(() => Boolean)
  ping(): boolean {
    return true;
  }

  @Mutation(() => Boolean)
  change(): boolean {
    RoleProbeResolver.ran.push('change');
    return true;
  }

  @Mutation(() => Boolean)
  @MinimumRole('owner')
  changeUsers(): boolean {
    RoleProbeResolver.ran.push('changeUsers');
    return true;
  }
}

describe('a mutation declares its minimum role', () => {
  const key = principalFor('acme', 'live');
  const cases: [string, Principal, { change: boolean; changeUsers: boolean }][] = [
    ['viewer', asUser(key, 'viewer'), { change: false, changeUsers: false }],
    ['developer', asUser(key, 'developer'), { change: true, changeUsers: false }],
    ['owner', asUser(key, 'owner'), { change: true, changeUsers: true }],
    ['an API key', key, { change: true, changeUsers: true }],
  ];

  it.each(cases)('%s: developer by default, owner where declared', async (_who, principal, allowed) => {
    const schema = enforceMutationRoles(await buildFederatedSchema({ resolvers: [RoleProbeResolver] }));
    for (const field of ['change', 'changeUsers'] as const) {
      RoleProbeResolver.ran = [];
      const result = await graphql({ schema, source: `mutation { ${field} }`, contextValue: { principal } });
      if (allowed[field]) {
        expect(result).toEqual({ data: { [field]: true } });
        expect(RoleProbeResolver.ran).toEqual([field]);
      } else {
        expect(result.errors?.[0].extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'insufficient_role' });
        expect(RoleProbeResolver.ran).toEqual([]);
      }
    }
  });
});
