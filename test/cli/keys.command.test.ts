import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityService } from '../../identity/identity.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { createTestDatabase } from '../support/database.js';
import { runCliProcess } from './cli-process.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openIdentityStore(db.url);
  // loadConfig keeps the internal secret under DATA_DIR: not in the working tree's .data.
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cli-keys-'));
});

afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function cli(...args: string[]) {
  return runCliProcess(args, { DATABASE_URL: db.url, DATA_DIR: dataDir });
}

function identity(): IdentityService {
  return new IdentityService(orm.em.fork());
}

const ACCOUNT = 'cli-acme';

describe('npm run cli -- keys', () => {
  let created: Record<string, unknown>;

  it('create prints one JSON object with the secret on stdout, and the secret works', async () => {
    const expiresAt = new Date(Date.now() + 24 * 60 * 60 * 1000).toISOString();
    const run = await cli('keys', 'create', '--kind', 'test', '--account', ACCOUNT, '--name', 'ci bot', '--expires-at', expiresAt);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    // The whole of stdout is one JSON document, so `| jq .secret` works.
    created = JSON.parse(run.stdout);
    expect(created).toMatchObject({ kind: 'test', account: ACCOUNT, name: 'ci bot', expiresAt, disabledAt: null });
    expect(created.id).toEqual(expect.any(String));
    expect(created.secret).toMatch(/^sk_test_/);
    const auth = await identity().authenticate(created.secret as string);
    expect(auth.ok && auth.principal).toMatchObject({ keyId: created.id, account: ACCOUNT, mode: 'test' });
  });

  it('list prints the key as a JSON array without its secret', async () => {
    const run = await cli('keys', 'list', '--account', ACCOUNT);
    expect(run.code).toBe(0);
    const listed = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(listed.map((key) => key.id)).toEqual([created.id]);
    const { secret, ...view } = created;
    expect(listed[0]).toEqual(view);
    expect(run.stdout).not.toContain((secret as string).slice(12));
  });

  it('list --format table prints one aligned row per key under a header, without its secret', async () => {
    const run = await cli('keys', 'list', '--account', ACCOUNT, '--format', 'table');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const [header, row, ...rest] = run.stdout.trimEnd().split('\n');
    expect(rest).toEqual([]);
    const columns = header.split(/\s{2,}/);
    expect(columns.slice(0, 3)).toEqual(Object.keys(created).filter((field) => field !== 'secret').slice(0, 3));
    // Each value starts where its column's name does.
    for (const field of ['id', 'kind', 'account', 'name'] as const) expect(row.slice(header.indexOf(field)).startsWith(String(created[field]))).toBe(true);
    expect(run.stdout).not.toContain((created.secret as string).slice(12));
  });

  it('disable prints the disabled key and the secret stops working', async () => {
    const run = await cli('keys', 'disable', created.id as string);
    expect(run.code).toBe(0);
    const disabled = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(disabled).toMatchObject({ id: created.id, account: ACCOUNT });
    expect(disabled.disabledAt).toEqual(expect.any(String));
    expect(disabled).not.toHaveProperty('secret');
    expect(await identity().authenticate(created.secret as string)).toEqual({ ok: false, reason: 'key_disabled' });
  });

  it('disable of an unknown id exits 1 with one line on stderr and nothing on stdout', async () => {
    const run = await cli('keys', 'disable', 'key_doesnotexist');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: [^\n]*key_doesnotexist[^\n]*\n$/);
  });

  it('an unknown command exits 2 with the usage on stderr', async () => {
    const run = await cli('keys', 'rotate');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('unknown command "keys rotate"');
    expect(run.stderr).toContain('keys create --kind');
  });
});
