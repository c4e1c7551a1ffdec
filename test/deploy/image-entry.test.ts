import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.js';
import { PROJECT_ROOT, spawnService } from '../support/service-process.js';
import { TEST_SECRET } from '../support/subgraph-harness.js';

/** Runs the image's entrypoint as the container does (`node deploy/image-entry.mjs <entry>`), over the compiled dist/. */
async function runImageEntry(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const service = spawnService(process.execPath, ['deploy/image-entry.mjs', ...args], env);
  const code = await service.exited;
  return { code, output: service.output() };
}

describe("the image's entrypoint", () => {
  let database: { url: string; drop(): Promise<void> };
  let dataDir: string;

  beforeAll(async () => {
    // dist/ as `npm run build` leaves it in the image's build stage (built here only when stale, under the build's lock).
    const build = spawnService(process.execPath, ['--input-type=module', '-e', "await (await import('./platform/supervisor/build.mjs')).buildIfStale()"], process.env);
    expect(await build.exited, build.output()).toBe(0);
    database = await createTestDatabase();
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'image-entry-'));
  }, 300_000);

  afterAll(async () => {
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses a name that is no entry, listing every entry', async () => {
    const entries = (await readdir(path.join(PROJECT_ROOT, 'platform/entries'))).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();
    const result = await runImageEntry(['migrations'], process.env);
    expect(result.code).toBe(2);
    expect(result.output).toContain(`No entry "migrations": one of ${entries.join(', ')}`);
    expect((await runImageEntry([], process.env)).code).toBe(2);
  });

  it('runs the compiled migrate entry in production mode against DATABASE_URL', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', DATABASE_URL: database.url, DATA_DIR: dataDir, INTERNAL_SECRET: TEST_SECRET, LOG_LEVEL: 'silent' };
    delete env.VITEST;
    const result = await runImageEntry(['migrate'], env);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('Migrated identity, membership, marketplace, inference, traceroute');
  });
});
