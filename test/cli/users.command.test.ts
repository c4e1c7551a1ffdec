import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountUser } from '../../identity/account-user.entity.js';
import { AccountUserService } from '../../identity/account-user.service.js';
import { openIdentityStore } from '../../identity/index.js';
import { createTestDatabase } from '../support/database.js';
import { runCliProcess } from './cli-process.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'node_modules', '.bin');

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openIdentityStore(db.url);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cli-users-'));
});
afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function cli(...args: string[]) {
  return runCliProcess(args, { DATABASE_URL: db.url, DATA_DIR: dataDir });
}

/** The CLI with `input` on its stdin, as `echo "$PW" | npm run cli -- ...` gives it. */
function cliWithStdin(input: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(BIN, 'tsx'), ['cli/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, PATH: `${BIN}${path.delimiter}${process.env.PATH ?? ''}`, DATABASE_URL: db.url, DATA_DIR: dataDir },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('npm run cli -- users create-owner', () => {
  it('creates the account and its first owner with the password from stdin, who can then sign in', async () => {
    const run = await cliWithStdin('stdin password 1\n', 'users', 'create-owner', '--account', 'fresh-co', '--email', 'Boss@Example.com', '--name', 'Boss');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout);
    expect(printed.user).toMatchObject({ email: 'boss@example.com', name: 'Boss', role: 'owner', platformAdmin: false });
    expect(printed.account).toMatchObject({ name: 'fresh-co', id: expect.any(String) });
    expect(run.stdout).not.toContain('stdin password');
    const service = new AccountUserService(orm.em.fork());
    expect((await service.checkCredentials('boss@example.com', 'stdin password 1'))?.id).toBe(printed.user.id);
    expect(await service.checkCredentials('boss@example.com', 'stdin password 2')).toBeNull();
    // Stored as an argon2id hash, never as given.
    const stored = await orm.em.fork().findOneOrFail(AccountUser, { id: printed.user.id });
    expect(stored.passwordHash).toMatch(/^\$argon2id\$/);
  });

  it('takes --password for scripts, and --platform-admin', async () => {
    const run = await cli('users', 'create-owner', '--account', 'operators', '--email', 'ops@example.com', '--password', 'scripted password', '--platform-admin');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).user).toMatchObject({ email: 'ops@example.com', platformAdmin: true, name: 'ops' });
  });

  it('refuses an email that already has a user (in any case), a short password, and missing flags', async () => {
    const again = await cli('users', 'create-owner', '--account', 'fresh-co', '--email', 'BOSS@example.com', '--password', 'another password');
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: .*already exists/);
    expect(again.stdout).toBe('');
    const weak = await cli('users', 'create-owner', '--account', 'fresh-co', '--email', 'weak@example.com', '--password', 'short');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toMatch(/^error: Passwords are 10/);
    const missing = await cli('users', 'create-owner', '--email', 'x@example.com', '--password', 'long enough pw');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--account is required/);
    const noStdin = await cli('users', 'create-owner', '--account', 'fresh-co', '--email', 'nostdin@example.com');
    expect(noStdin.code).not.toBe(0);
    expect(await orm.em.fork().count(AccountUser, { email: { $in: ['weak@example.com', 'x@example.com', 'nostdin@example.com'] } })).toBe(0);
  });
});
