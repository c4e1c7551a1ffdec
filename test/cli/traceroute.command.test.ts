import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.js';
import { runCliProcess } from './cli-process.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let dataDir: string;

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'cli-traceroute-'));
});

afterAll(async () => {
  await db?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCliProcess(args, { DATABASE_URL: db.url, DATA_DIR: dataDir });

async function count(): Promise<number> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query('select count(*)::int as n from traceroute.trace')).rows[0].n;
  } finally {
    await client.end();
  }
}

describe('npm run cli -- traceroute', () => {
  it('imports files, prints what it stored and skipped, and adds nothing on a second import', async () => {
    const bad = path.join(dataDir, 'mixed.jsonl');
    await writeFile(bad, '{"type":"ping","msm_id":1,"prb_id":2,"timestamp":3,"avg":1,"result":[]}\nnot json\n');
    const data = path.resolve(import.meta.dirname, '../fixtures/traceroute');
    const atlas = path.join(data, 'ripe-atlas-traceroutes.jsonl');
    const scamper = path.join(data, 'scamper2-valid-complex.jsonl');
    const first = await cli('traceroute', 'import', atlas, scamper, bad);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report).toMatchObject({ stored: 15, duplicates: 0, skipped: 2 });
    expect(report.files[2].skipped).toEqual([
      { position: 'line 1', reason: 'a RIPE Atlas "ping" result, not a traceroute' },
      { position: 'line 2', reason: expect.stringMatching(/^not JSON/) },
    ]);
    // Not a terminal: no progress bar on stderr.
    expect(first.stderr).not.toContain('[#');
    const second = await cli('traceroute', 'import', atlas);
    expect(JSON.parse(second.stdout)).toMatchObject({ stored: 0, duplicates: 14 });
    expect(await count()).toBe(15);
  }, 60_000);

  it('generates synthetic traces', async () => {
    const run = await cli('traceroute', 'generate', '--count', '200', '--seed', '5');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ generated: 200, stored: 200, seed: 5 });
    expect(await count()).toBe(215);
  }, 60_000);

  it('refuses a missing file and a bad count before storing anything', async () => {
    const missing = await cli('traceroute', 'import', '/nonexistent.jsonl');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('/nonexistent.jsonl is not a readable file');
    const noFiles = await cli('traceroute', 'import');
    expect(noFiles.code).toBe(2);
    const badCount = await cli('traceroute', 'generate', '--count', 'many');
    expect(badCount.code).toBe(1);
    expect(badCount.stderr).toContain('--count must be a whole number');
  }, 60_000);
});
