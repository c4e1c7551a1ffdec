import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIdentityStore } from '../../identity/index.js';
import { createTestDatabase } from '../support/database.js';
import { runCliProcess } from './cli-process.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  await (await openIdentityStore(db.url)).close(true);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cli-keys-limit-'));
});

afterAll(async () => {
  await db?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('npm run cli -- keys create past the cap', () => {
  it('fails with exit code 1 and names the cap (MAX_ACTIVE_KEYS_PER_ACCOUNT); other kinds still issue', async () => {
    const cli = (...args: string[]) => runCliProcess(args, { DATABASE_URL: db.url, DATA_DIR: dataDir, MAX_ACTIVE_KEYS_PER_ACCOUNT: '2' });
    expect((await cli('keys', 'create', '--kind', 'live', '--account', 'capped')).code).toBe(0);
    expect((await cli('keys', 'create', '--kind', 'test', '--account', 'capped')).code).toBe(0);
    const refused = await cli('keys', 'create', '--kind', 'live', '--account', 'capped');
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^error: This account already has 2 active live and test keys/);
    expect((await cli('keys', 'create', '--kind', 'traceroute', '--account', 'capped')).code).toBe(0);
  });
});
