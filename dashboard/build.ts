import { mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The dashboard's folder; its build lands in `dist/` beside it. Compiled into the project's dist/dashboard, it is still the source folder. */
export const DASHBOARD_ROOT = path.basename(path.dirname(here)) === 'dist' ? path.resolve(here, '../../dashboard') : here;
export const DASHBOARD_DIST = path.join(DASHBOARD_ROOT, 'dist');

interface BuildLogger {
  info(message: string): void;
}

const SOURCES = ['index.html', 'vite.config.ts', 'src', 'public'];
const LOCK = path.join(DASHBOARD_ROOT, '.build.lock');
// A lock older than this was left by a build that died; builds take well under a minute here.
const STALE_LOCK_MS = 5 * 60_000;

/**
 * Builds the dashboard with Vite when dist/ is missing or older than any source file. Concurrent
 * callers (test files, several `npm start`s) wait on one lock file, so only one build runs.
 */
export async function ensureDashboardBuilt(logger?: BuildLogger): Promise<void> {
  if (await isFresh()) return;
  const release = await acquireLock();
  try {
    // Another process may have built it while this one waited.
    if (await isFresh()) return;
    const started = Date.now();
    logger?.info('Building the dashboard (dashboard/dist is missing or older than its sources)');
    const { build } = await import('vite');
    await build({ configFile: path.join(DASHBOARD_ROOT, 'vite.config.ts'), logLevel: 'warn' });
    logger?.info(`Dashboard built in ${Date.now() - started} ms`);
  } finally {
    await release();
  }
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

async function acquireLock(): Promise<() => Promise<void>> {
  await mkdir(DASHBOARD_ROOT, { recursive: true });
  for (;;) {
    try {
      const handle = await open(LOCK, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(LOCK, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - ((await mtimeOf(LOCK)) ?? Date.now());
      if (age > STALE_LOCK_MS) await rm(LOCK, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
