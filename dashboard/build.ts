import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withFileLock } from '../core/file-lock.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The dashboard's folder; its build lands in `dist/` beside it. Compiled into the project's dist/dashboard, it is still the source folder. */
export const DASHBOARD_ROOT = path.basename(path.dirname(here)) === 'dist' ? path.resolve(here, '../../dashboard') : here;
export const DASHBOARD_DIST = path.join(DASHBOARD_ROOT, 'dist');

interface BuildLogger {
  info(message: string): void;
}

const SOURCES = ['index.html', 'vite.config.ts', 'src', 'public'];
const LOCK = path.join(DASHBOARD_ROOT, '.build.lock');

/**
 * Builds the dashboard with Vite when dist/ is missing or older than any source file. Concurrent
 * callers (test files, several `npm start`s) wait on one lock, so only one build runs; a lock
 * whose holder died mid-build is taken over at once (core/file-lock.mjs).
 */
export async function ensureDashboardBuilt(logger?: BuildLogger): Promise<void> {
  if (await isFresh()) return;
  await withFileLock(
    LOCK,
    async () => {
      // Another process may have built it while this one waited.
      if (await isFresh()) return;
      const started = Date.now();
      logger?.info('Building the dashboard (dashboard/dist is missing or older than its sources)');
      const { build } = await import('vite');
      await build({ configFile: path.join(DASHBOARD_ROOT, 'vite.config.ts'), logLevel: 'warn' });
      logger?.info(`Dashboard built in ${Date.now() - started} ms`);
    },
    { onTakeOver: (reason) => logger?.info(`Taking over the dashboard's build lock: ${reason}`) },
  );
}

async function isFresh(): Promise<boolean> {
  const built = await mtimeOf(path.join(DASHBOARD_DIST, 'index.html'));
  if (built === undefined) return false;
  for (const source of SOURCES) {
    if ((await newestIn(path.join(DASHBOARD_ROOT, source))) > built) return false;
  }
  return true;
}

async function mtimeOf(file: string): Promise<number | undefined> {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return undefined;
  }
}

async function newestIn(entry: string): Promise<number> {
  let info;
  try {
    info = await stat(entry);
  } catch {
    return 0;
  }
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = info.mtimeMs;
  for (const child of await readdir(entry)) newest = Math.max(newest, await newestIn(path.join(entry, child)));
  return newest;
}
