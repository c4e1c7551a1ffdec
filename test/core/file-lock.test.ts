import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withFileLock } from '../../core/file-lock.mjs';

const LOCK_MODULE = path.resolve(import.meta.dirname, '../../core/file-lock.mjs');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'file-lock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Another process that takes the lock, says so, and holds it until it is killed or `holdMs` passes. */
function holderProcess(lockDir: string, holdMs: number) {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { withFileLock } = await import(${JSON.stringify(LOCK_MODULE)});
       await withFileLock(${JSON.stringify(lockDir)}, async () => { process.stdout.write('held\\n'); await new Promise((r) => setTimeout(r, ${holdMs})); });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const holding = new Promise<void>((resolve) => child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('held') && resolve()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { child, holding, exited };
}

describe('the build lock (core/file-lock.mjs)', () => {
  it('lets one holder in at a time, and lets go when the holder throws', async () => {
    const lock = path.join(dir, 'one-at-a-time');
    let inside = 0;
    let most = 0;
    const work = async () => {
      inside++;
      most = Math.max(most, inside);
      await new Promise((r) => setTimeout(r, 30));
      inside--;
    };
    await Promise.all(Array.from({ length: 5 }, () => withFileLock(lock, work, { pollMs: 10 })));
    expect(most).toBe(1);

    await expect(withFileLock(lock, () => Promise.reject(new Error('build failed')))).rejects.toThrow('build failed');
    expect(existsSync(lock)).toBe(false);
  });

  it('waits for a live holder in another process, and takes over at once from one that was killed', async () => {
    const lock = path.join(dir, 'across-processes');
    const live = holderProcess(lock, 1_500);
    await live.holding;
    let waited = false;
    const started = Date.now();
    await withFileLock(lock, () => undefined, { pollMs: 20, onWait: () => (waited = true) });
    // The live holder was waited for, not taken over.
    expect(waited).toBe(true);
    expect(Date.now() - started).toBeGreaterThan(500);
    await live.exited;

    // Killed while holding: no finally ran, the lock directory stays behind with its pid.
    const killed = holderProcess(lock, 60_000);
    await killed.holding;
    killed.child.kill('SIGKILL');
    await killed.exited;
    expect(existsSync(lock)).toBe(true);
    const reasons: string[] = [];
    const takeOverStarted = Date.now();
    // The stale age stays at its default (5 minutes): only the dead pid can explain a prompt take-over.
    await withFileLock(lock, () => undefined, { pollMs: 20, onTakeOver: (reason) => reasons.push(reason) });
    expect(Date.now() - takeOverStarted).toBeLessThan(5_000);
    expect(reasons).toEqual([`its holder (pid ${killed.child.pid}) is gone`]);
    expect(existsSync(lock)).toBe(false);
  });
});
