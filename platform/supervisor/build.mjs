// The production build, in plain JavaScript because it runs before any compiled code exists:
// `npm run build` type-checks and compiles (tsconfig.build.json) to dist/, and npm start
// (launch.mjs) compiles without the check when dist/ is missing or older than the sources.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withFileLock } from '../../core/file-lock.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST = path.join(ROOT, 'dist');
const STAMP = path.join(DIST, '.build-stamp');
// What tsconfig.build.json compiles, and the files that change what it emits.
// The dashboard's client is Vite's (dashboard/build.ts builds it into dashboard/dist when stale).
const SOURCE_DIRS = ['core', 'identity', 'platform', 'subgraphs', 'edge', 'schema', 'cli'];
const SOURCE_FILES = ['dashboard/build.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function* filesUnder(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // Dot-files are locks and editors' leftovers, not sources.
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(full);
    else if (entry.isFile()) yield full;
  }
}

function sources() {
  return [...SOURCE_DIRS.flatMap((dir) => [...filesUnder(path.join(ROOT, dir))]), ...SOURCE_FILES.map((file) => path.join(ROOT, file)).filter(existsSync)];
}

/** Why dist/ must be built again, or undefined when it is up to date. */
export function staleReason() {
  if (!existsSync(STAMP)) return 'dist/ has not been built';
  const builtAt = statSync(STAMP).mtimeMs;
  const newer = sources().find((file) => statSync(file).mtimeMs > builtAt);
  return newer ? `${path.relative(ROOT, newer)} changed since the last build` : undefined;
}

/**
 * Compiles to dist/ and copies what the compiled code reads beside itself (schema/*.graphql and any
 * other file that is not TypeScript). Throws with the compiler's output when it fails.
 */
export function build({ typeCheck }) {
  // The stamp takes the newest source's time as the build starts (the files' clock, not this
  // process's): a source saved during the build is newer than it, so the next start builds again.
  const newest = new Date(Math.ceil(Math.max(...sources().map((file) => statSync(file).mtimeMs))));
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), ...(typeCheck ? [] : ['--noCheck'])], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new Error(`the TypeScript compiler failed (exit ${result.status}):\n${result.stdout}${result.stderr}`);
  }
  for (const file of sources()) {
    const relative = path.relative(ROOT, file);
    if (!SOURCE_DIRS.includes(relative.split(path.sep)[0]) || /\.(ts|tsx|md)$/.test(file)) continue;
    mkdirSync(path.dirname(path.join(DIST, relative)), { recursive: true });
    copyFileSync(file, path.join(DIST, relative));
  }
  writeFileSync(STAMP, `${newest.toISOString()}\n`);
  utimesSync(STAMP, newest, newest);
}

const LOCK = path.join(DIST, '.build-lock');

/**
 * Builds (without the type-check) when dist/ is stale, one build at a time: several `npm start`s
 * or test files starting together wait on one lock, and the waiters find dist/ fresh. A lock left
 * by a start that was stopped mid-build is taken over at once (core/file-lock.mjs).
 * Resolves with the reason it built, or undefined when dist/ was current.
 */
export async function buildIfStale(onBuild = () => {}, onWait = () => {}) {
  if (!staleReason()) return undefined;
  return withFileLock(
    LOCK,
    () => {
      const reason = staleReason();
      if (!reason) return undefined;
      onBuild(reason);
      build({ typeCheck: false });
      return reason;
    },
    { onWait },
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const started = Date.now();
  try {
    build({ typeCheck: true });
    process.stdout.write(`Built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } catch (error) {
    process.stderr.write(`\nCannot build: ${error.message}\n`);
    process.exit(1);
  }
}
