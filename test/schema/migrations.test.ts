import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityOrmOptions } from '../../identity/index.js';
import { marketplaceOrmOptions } from '../../subgraphs/marketplace/mikro-orm.config.js';
import { membershipOrmOptions } from '../../subgraphs/membership/mikro-orm.config.js';
import { inferenceOrmOptions } from '../../subgraphs/inference/mikro-orm.config.js';
import { migrate, openOrm } from '../../core/orm.js';
import { createTestDatabase } from '../support/database.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe.each([
  ['identity', identityOrmOptions],
  ['membership', membershipOrmOptions],
  ['marketplace', marketplaceOrmOptions],
  ['inference', inferenceOrmOptions],
])('the %s migrations', (_name, options) => {
  it('create exactly what the entities describe, and run twice without change', async () => {
    const orm = await openOrm({ clientUrl: db.url, ...options });
    try {
      await migrate(orm, db.url, options.schema);
      await migrate(orm, db.url, options.schema);
      expect(await orm.schema.getUpdateSchemaSQL({ wrap: false, schema: options.schema })).toBe('');
      expect(await orm.migrator.getPending()).toEqual([]);
    } finally {
      await orm.close(true);
    }
  });
});

it('concurrent starts of one service migrate once', async () => {
  const fresh = await createTestDatabase();
  const orms = await Promise.all([1, 2, 3].map(() => openOrm({ clientUrl: fresh.url, ...membershipOrmOptions })));
  try {
    await Promise.all(orms.map((orm) => migrate(orm, fresh.url, membershipOrmOptions.schema)));
    const rows = await orms[0].em.getConnection().execute('select count(*)::int as n from "membership"."mikro_orm_migrations"');
    expect(rows[0].n).toBe(membershipOrmOptions.migrations.length);
  } finally {
    for (const orm of orms) await orm.close(true);
    await fresh.drop();
  }
});
