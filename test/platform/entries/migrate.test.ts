import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLATFORM_SCHEMAS } from '../../../platform/schema-migrations.js';
import { createTestDatabase } from '../../support/database.js';
import { spawnService, TSX } from '../../support/service-process.js';
import { TEST_SECRET } from '../../support/subgraph-harness.js';

/** Runs the one-shot entry as a deployment's migration job does, and waits for it to exit. */
async function runMigrate(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const service = spawnService(TSX, ['platform/entries/migrate.ts'], env);
  const code = await service.exited;
  return { code, output: service.output() };
}

/** The migrations recorded in each schema's migration table. */
async function recorded(url: string): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Record<string, string[]> = {};
    for (const { schema } of PLATFORM_SCHEMAS) {
      const rows = await client.query<{ name: string }>(`select name from "${schema}".mikro_orm_migrations order by id`);
      out[schema] = rows.rows.map((row) => row.name);
    }
    return out;
  } finally {
    await client.end();
  }
}

describe('the migrate entry', () => {
  let database: { url: string; drop(): Promise<void> };
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'migrate-entry-'));
    env = { ...process.env, DATABASE_URL: database.url, DATA_DIR: dataDir, INTERNAL_SECRET: TEST_SECRET, LOG_LEVEL: 'silent' };
  });

  afterAll(async () => {
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('migrates every schema once, exits 0, and changes nothing when run again', async () => {
    const first = await runMigrate(env);
    expect(first.code, first.output).toBe(0);
    expect(first.output).toContain('Migrated identity, membership, marketplace, inference, traceroute');
    const expected = Object.fromEntries(PLATFORM_SCHEMAS.map((options) => [options.schema, options.migrations.map((m) => m.name)]));
    expect(await recorded(database.url)).toEqual(expected);

    const second = await runMigrate(env);
    expect(second.code, second.output).toBe(0);
    expect(await recorded(database.url)).toEqual(expected);
  });

  it('exits 1 naming the failure when the database does not answer', async () => {
    const result = await runMigrate({ ...env, DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none' });
    expect(result.code).toBe(1);
    expect(result.output).toContain('Cannot migrate:');
  });
});
