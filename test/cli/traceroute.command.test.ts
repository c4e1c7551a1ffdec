import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
  it('imports files, prints what it read, stored and skipped, and adds nothing on a second import', async () => {
    const data = path.resolve(import.meta.dirname, '../fixtures/traceroute');
    const atlas = path.join(data, 'ripe-atlas-traceroutes.jsonl');
    const scamper = path.join(data, 'scamper2-valid-complex.jsonl');
    const first = await cli('traceroute', 'import', atlas, scamper);
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report).toMatchObject({ read: 15, stored: 15, duplicates: 0, skipped: 0 });
    // scamper's metadata and cycle lines are no records: its file holds one trace.
    expect(report.files.map((f: { read: number }) => f.read)).toEqual([14, 1]);
    // Not a terminal: no progress bar on stderr.
    expect(first.stderr).not.toContain('[#');
    // Stored before is no failure: nothing of it is missing from the store.
    const second = await cli('traceroute', 'import', atlas);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ read: 14, stored: 0, duplicates: 14 });
    expect(await count()).toBe(15);
  }, 60_000);

  it('counts skipped records as read, and exits 1 naming a non-empty file of which it stored nothing', async () => {
    const bad = path.join(dataDir, 'mixed.jsonl');
    await writeFile(bad, '{"type":"ping","msm_id":1,"prb_id":2,"timestamp":3,"avg":1,"result":[]}\nnot json\n');
    const half = path.join(dataDir, 'half.jsonl');
    const [good] = (await readFile(path.resolve(import.meta.dirname, '../fixtures/traceroute/ripe-atlas-quirks.jsonl'), 'utf8')).split('\n');
    await writeFile(half, `${good}\nnot json\n`);
    const empty = path.join(dataDir, 'empty.jsonl');
    await writeFile(empty, '\n\n');
    const run = await cli('traceroute', 'import', half, bad, empty);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ read: 4, stored: 1, duplicates: 0, skipped: 3 });
    expect(report.files.map((f: { read: number; stored: number }) => [f.read, f.stored])).toEqual([[2, 1], [2, 0], [0, 0]]);
    expect(report.files[1].skipped).toEqual([
      { position: 'line 1', reason: 'a RIPE Atlas "ping" result, not a traceroute' },
      { position: 'line 2', reason: expect.stringMatching(/^not JSON/) },
    ]);
    expect(run.stderr).toMatch(/^error: nothing was stored from .*mixed\.jsonl \(2 records read, 2 skipped; line 1: a RIPE Atlas "ping" result/m);
    expect(run.stderr).not.toMatch(/half|empty/);
    // A file of only scamper's cycle lines holds no trace at all: nothing stored from a non-empty file.
    const cycles = path.join(dataDir, 'cycles.jsonl');
    await writeFile(cycles, '{"type":"cycle-start","list_name":"default","id":1,"hostname":"vm","start_time":1}\n{"type":"cycle-stop","list_name":"default","id":1,"hostname":"vm","stop_time":2}\n');
    const none = await cli('traceroute', 'import', cycles);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout)).toMatchObject({ read: 0, stored: 0 });
    expect(none.stderr).toMatch(/nothing was stored from .*cycles\.jsonl \(0 records read/);
    expect(await count()).toBe(16);
  }, 60_000);

  it('generates synthetic traces', async () => {
    const run = await cli('traceroute', 'generate', '--count', '200', '--seed', '5');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ generated: 200, stored: 200, seed: 5 });
    expect(await count()).toBe(216);
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

  it.skipIf(!existsSync('/usr/bin/script'))('shows the progress on a terminal with records a second and, at the end, the time it took', async () => {
    const atlas = path.resolve(import.meta.dirname, '../fixtures/traceroute/ripe-atlas-traceroutes.jsonl');
    // script(1) gives the command a terminal, as a person running it has.
    const command = `${path.resolve(import.meta.dirname, '../../node_modules/.bin/tsx')} cli/main.ts traceroute import '${atlas}'`;
    const run = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        env: { ...process.env, PATH: `${path.resolve(import.meta.dirname, '../../node_modules/.bin')}:${process.env.PATH}`, DATABASE_URL: db.url, DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, output }));
    });
    expect(run.code, run.output).toBe(0);
    const drawn = run.output.split(/[\r\n]+/).filter((line) => line.includes('[#') || line.includes('[.'));
    expect(drawn.at(-1)).toMatch(/\] 100% 14 records, \d+ records\/s, done in \d+ s; \d+ stored, \d+ duplicate, 0 skipped$/);
  });
});
