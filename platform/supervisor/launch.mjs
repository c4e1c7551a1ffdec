// `npm start`: compiles dist/ when it is missing or older than the sources, then runs the
// supervisor from it (platform/start.ts, compiled). Plain JavaScript: it runs before the build.
import { build, DIST, staleReason } from './build.mjs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const reason = staleReason();
if (reason) {
  const started = Date.now();
  process.stdout.write(`Building dist/ (${reason}) ...\n`);
  try {
    // Type errors are the type-check's to report (npm run build, npm run typecheck); the start
    // only needs the compiled files, which are the same either way.
    build({ typeCheck: false });
  } catch (error) {
    process.stderr.write(`\nCannot start: ${error.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`Built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
await import(pathToFileURL(path.join(DIST, 'platform/start.js')).href);
