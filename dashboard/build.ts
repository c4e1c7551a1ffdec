import { spawn } from 'node:child_process';
import { readdir, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
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
const VITE = path.join(path.dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin/vite.js');

/**
 * Builds the dashboard with Vite when dist/ is missing or older than any source file. Concurrent
 * callers (test files, several `npm start`s) wait on one lock, so only one build runs; a lock
 * whose holder died mid-build is taken over at once (core/file-lock.mjs). `root` is the folder
 * holding vite.config.ts and the sources (the dashboard's own by default).
 */
export async function ensureDashboardBuilt(logger?: BuildLogger, root = DASHBOARD_ROOT): Promise<void> {
  if (await isFresh(root)) return;
  await withFileLock(
    path.join(root, '.build.lock'),
    async () => {
      // Another process may have built it while this one waited.
      if (await isFresh(root)) return;
      const started = Date.now();
      logger?.info('Building the dashboard (dashboard/dist is missing or older than its sources)');
      await viteBuild(root);
      logger?.info(`Dashboard built in ${Date.now() - started} ms`);
    },
    { onTakeOver: (reason) => logger?.info(`Taking over the dashboard's build lock: ${reason}`) },
  );
}

/**
 * Vite's build in a process of its own: Vite sets NODE_ENV=production in the process it runs in,
 * and the supervisor hands its environment to every service it starts.
 */
function viteBuild(root: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VITE, 'build', '--config', path.join(root, 'vite.config.ts'), '--logLevel', 'warn'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`vite build exited with ${signal ?? code}:\n${output.slice(-4000)}`)),
    );
  });
}

async function isFresh(root: string): Promise<boolean> {
  const built = await mtimeOf(path.join(root, 'dist', 'index.html'));
  if (built === undefined) return false;
  for (const source of SOURCES) {
    if ((await newestIn(path.join(root, source))) > built) return false;
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
