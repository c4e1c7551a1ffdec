import { mkdtemp, rm, writeFile } from 'node:fs/promises';
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
let inferenceConfig: string;

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openIdentityStore(db.url);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cli-keys-plan-'));
  // Two plans over the built-in providers; the CLI reads them from INFERENCE_CONFIG.
  inferenceConfig = path.join(dataDir, 'inference.json');
  await writeFile(
    inferenceConfig,
    JSON.stringify({
      plans: [
        { id: 'standard', models: { provider_a: ['*'] } },
        { id: 'pro', models: { provider_a: ['*'], provider_b: ['*'] } },
      ],
      defaultPlan: 'standard',
    }),
  );
});

afterAll(async () => {
  await orm?.close(true);
  await db?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function cli(...args: string[]) {
  return runCliProcess(args, { DATABASE_URL: db.url, DATA_DIR: dataDir, INFERENCE_CONFIG: inferenceConfig });
}

async function principalOf(secret: string) {
  const result = await new IdentityService(orm.em.fork()).authenticate(secret);
  return result.ok ? result.principal : expect.unreachable(result.reason);
}

describe('npm run cli -- keys with inference plans', () => {
  const ACCOUNT = 'cli-plans';
  let pro: Record<string, unknown>;
  let unassigned: Record<string, unknown>;

  it('create --plan issues a text key on that plan, and its principal carries it', async () => {
    const run = await cli('keys', 'create', '--kind', 'text', '--account', ACCOUNT, '--plan', 'pro');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    pro = JSON.parse(run.stdout);
    expect(pro).toMatchObject({ kind: 'text', account: ACCOUNT, plan: 'pro' });
    expect(await principalOf(pro.secret as string)).toMatchObject({ keyId: pro.id, kind: 'text', plan: 'pro' });
  });

  it('create without --plan leaves an image key on the default plan (null)', async () => {
    const run = await cli('keys', 'create', '--kind', 'image', '--account', ACCOUNT);
    expect(run.code).toBe(0);
    unassigned = JSON.parse(run.stdout);
    expect(unassigned).toMatchObject({ kind: 'image', plan: null });
    expect(await principalOf(unassigned.secret as string)).not.toHaveProperty('plan');
  });

  it('create refuses an unknown plan, listing the configured ones, and issues nothing', async () => {
    const run = await cli('keys', 'create', '--kind', 'text', '--account', 'cli-plans-none', '--plan', 'gold');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: [^\n]*"gold"[^\n]*standard, pro\n$/);
    expect(await new IdentityService(orm.em.fork()).listKeys({ account: 'cli-plans-none' })).toEqual([]);
  });

  it.each(['live', 'traceroute'])('create refuses --plan on a %s key', async (kind) => {
    const run = await cli('keys', 'create', '--kind', kind, '--account', 'cli-plans-none', '--plan', 'pro');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(new RegExp(`^error: --plan is for text and image keys only, not ${kind} keys\\n$`));
    expect(await new IdentityService(orm.em.fork()).listKeys({ account: 'cli-plans-none' })).toEqual([]);
  });

  it('plan <id> <plan> moves a key to another plan, and the next authentication carries it', async () => {
    const run = await cli('keys', 'plan', unassigned.id as string, 'pro');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ id: unassigned.id, plan: 'pro' });
    expect(run.stdout).not.toContain('secret');
    expect(await principalOf(unassigned.secret as string)).toMatchObject({ plan: 'pro' });
  });

  it('plan refuses an unknown plan, a key of another kind and an unknown id, changing nothing', async () => {
    const live = JSON.parse((await cli('keys', 'create', '--kind', 'live', '--account', ACCOUNT)).stdout) as { id: string };
    const unknownPlan = await cli('keys', 'plan', pro.id as string, 'gold');
    expect(unknownPlan.code).toBe(1);
    expect(unknownPlan.stderr).toMatch(/^error: [^\n]*"gold"[^\n]*standard, pro\n$/);
    const otherKind = await cli('keys', 'plan', live.id, 'pro');
    expect(otherKind.code).toBe(1);
    expect(otherKind.stderr).toMatch(/^error: Plans are set on text and image keys only, not on live keys\n$/);
    const unknownId = await cli('keys', 'plan', 'key_doesnotexist', 'pro');
    expect(unknownId.code).toBe(1);
    expect(unknownId.stderr).toMatch(/^error: [^\n]*key_doesnotexist/);
    const plans = (await new IdentityService(orm.em.fork()).listKeys({ account: ACCOUNT })).map((key) => [key.id, key.plan]);
    expect(plans).toEqual([
      [pro.id, 'pro'],
      [unassigned.id, 'pro'],
      [live.id, null],
    ]);
  });

  it('plan without both arguments is a usage error (exit 2)', async () => {
    const run = await cli('keys', 'plan', pro.id as string);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^error: "keys plan" takes <id> <plan>\n/);
  });

  it('list shows each key with its plan', async () => {
    const run = await cli('keys', 'list', '--account', ACCOUNT);
    expect(run.code).toBe(0);
    const listed = JSON.parse(run.stdout) as { id: string; kind: string; plan: string | null }[];
    expect(listed.map(({ id, kind, plan }) => ({ id, kind, plan }))).toEqual([
      { id: pro.id, kind: 'text', plan: 'pro' },
      { id: unassigned.id, kind: 'image', plan: 'pro' },
      { id: expect.any(String), kind: 'live', plan: null },
    ]);
  });

  it('a broken INFERENCE_CONFIG stops only the commands that name a plan', async () => {
    const broken = { DATABASE_URL: db.url, DATA_DIR: dataDir, INFERENCE_CONFIG: path.join(dataDir, 'missing.json') };
    const withPlan = await runCliProcess(['keys', 'create', '--kind', 'text', '--account', ACCOUNT, '--plan', 'pro'], broken);
    expect(withPlan.code).toBe(1);
    expect(withPlan.stderr).toMatch(/^error: Invalid inference configuration[^\n]*missing\.json[^\n]*\n$/);
    expect((await runCliProcess(['keys', 'list', '--account', ACCOUNT], broken)).code).toBe(0);
  });
});
