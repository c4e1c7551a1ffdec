// `npm start`: compiles dist/ when it is missing or older than the sources, then runs the
// supervisor from it (platform/start.ts, compiled). Plain JavaScript: it runs before the build.
import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { buildIfStale, DIST } from './build.mjs';

const started = Date.now();
try {
  // Type errors are the type-check's to report (npm run build, npm run typecheck); the start
  // only needs the compiled files, which are the same either way.
  const built = await buildIfStale(
    (reason) => process.stdout.write(`Building dist/ (${reason}) ...\n`),
    () => process.stdout.write('Waiting for another start to finish building dist/ ...\n'),
  );
  if (built) process.stdout.write(`Built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
} catch (error) {
  process.stderr.write(`\nCannot start: ${error.message}\n`);
  process.exit(1);
}

// The supervisor runs in a process group of its own, and this process passes signals on to it.
// A terminal's Ctrl-C goes to its whole foreground group: were the supervisor in it, the embedded
// PostgreSQL it starts would be too, and would shut down at once, under services still stopping.
// If this process dies without a signal to pass on, the supervisor's IPC channel closes and it
// stops everything itself.
const supervisor = fork(path.join(DIST, 'platform/start.js'), process.argv.slice(2), { detached: true, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => supervisor.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal));
}
supervisor.on('exit', (code, signal) => process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0)));
