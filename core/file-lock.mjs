// Plain JavaScript: `npm start`'s launcher (platform/supervisor/build.mjs) takes this lock before
// anything is compiled; compiled code (dashboard/build.ts) imports it from dist/core beside it.
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return error.code === 'EPERM';
  }
}

/**
 * Why the lock at `lockDir` may be taken over, or undefined while its holder may still be working:
 * the holder's process is gone (killed during a build, or Ctrl-C before it could let go), or the
 * lock is older than `staleMs` (its pid taken by another process since).
 */
async function abandoned(lockDir, staleMs) {
  let info;
  try {
    info = await stat(lockDir);
  } catch {
    return undefined;
  }
  const pid = Number(await readFile(path.join(lockDir, 'pid'), 'utf8').catch(() => ''));
  if (pid > 0 && !alive(pid)) return `its holder (pid ${pid}) is gone`;
  if (Date.now() - info.mtimeMs > staleMs) return `it is older than ${Math.round(staleMs / 1000)} s`;
  // No pid yet: the holder made the directory a moment ago and is writing it.
  return undefined;
}

/**
 * Runs `fn` holding an exclusive lock shared by the processes of this machine: a directory made
 * atomically (mkdir), with the holder's pid inside. Waiters poll; a lock whose holder died is
 * taken over at once instead of blocking every later start until it goes stale. Two waiters that
 * see the same dead holder in the same instant could both take over; the holders here (builds)
 * only make the same files twice if they do.
 */
export async function withFileLock(lockDir, fn, { staleMs = 5 * 60_000, pollMs = 250, onWait, onTakeOver } = {}) {
  await mkdir(path.dirname(lockDir), { recursive: true });
  let waited = false;
  for (;;) {
    try {
      await mkdir(lockDir);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    const reason = await abandoned(lockDir, staleMs);
    if (reason) {
      onTakeOver?.(reason);
      await rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!waited) onWait?.();
    waited = true;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  try {
    await writeFile(path.join(lockDir, 'pid'), String(process.pid));
    return await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}
