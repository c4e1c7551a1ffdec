// `node bench/run.mjs <bench> [args]`: runs bench/<bench>.ts compiled, as production runs the
// platform (npm start runs dist/, never the TypeScript loader). Builds dist/ when it is stale,
// compiles the benches beside it (bench/tsconfig.json, no type-check: `npm run typecheck` has
// that), then runs dist/bench/<bench>.js. Under tsx the same bench pays for the loader's hooks on
// every `require` and esbuild's `__name` on every closure: costs production does not have, which
// fall on our code and not on the peers' (already JavaScript) that a bench compares it with.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildIfStale, DIST, ROOT } from '../platform/supervisor/build.mjs';

const [name, ...args] = process.argv.slice(2);
if (!name || !existsSync(path.join(ROOT, 'bench', `${name}.ts`))) {
  process.stderr.write(`usage: node bench/run.mjs <bench> (one of bench/*.ts)\n`);
  process.exit(2);
}
await buildIfStale((reason) => process.stderr.write(`Building dist/ (${reason}) ...\n`));
const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'bench/tsconfig.json'), '--noCheck'], { cwd: ROOT, encoding: 'utf8' });
if (compiled.status !== 0) {
  process.stderr.write(`compiling the benches failed:\n${compiled.stdout}${compiled.stderr}`);
  process.exit(1);
}
const child = spawn(process.execPath, [path.join(DIST, 'bench', `${name}.js`), ...args], { cwd: ROOT, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
