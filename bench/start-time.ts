import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/*
 * Start time of the platform, from the command to "Platform is up.", on a fresh DATA_DIR (initdb,
 * every migration) and again on the same one (warm), and how long Ctrl-C takes to stop it:
 *   before  SINGLE_PROCESS=true tsx platform/start.ts: everything in one process, TypeScript loader
 *   tsx     tsx platform/start.ts: the supervised topology, every process through the TypeScript loader
 *   after   node platform/supervisor/launch.mjs (what npm start runs): the supervised topology from dist/
 * plus a cold compile of dist/ (the build npm start runs when the sources changed), into a
 * scratch directory. Run: npm run --silent bench:start-time  (takes minutes).
 */
const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'node_modules/.bin');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function portsEnv(): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { PORT: String(await freePort()), EMBEDDED_PG_PORT: String(await freePort()) };
  for (const name of ['MEMBERSHIP', 'MARKETPLACE', 'INFERENCE', 'TRACEROUTE']) env[`${name}_PORT`] = String(await freePort());
  return env;
}

/** Starts the platform, resolves with the seconds to "Platform is up." and to stop after Ctrl-C. */
async function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ upSeconds: number; stopSeconds: number }> {
  const started = performance.now();
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  while (!output.includes('Platform is up.')) {
    if (exitCode !== undefined) throw new Error(`exited with ${exitCode} before it was up:\n${output}`);
    if (performance.now() - started > 600_000) throw new Error(`not up after 10 minutes:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const upSeconds = (performance.now() - started) / 1000;
  const stopping = performance.now();
  // The whole group, as a terminal's Ctrl-C.
  process.kill(-child.pid!, 'SIGINT');
  await exited;
  return { upSeconds, stopSeconds: (performance.now() - stopping) / 1000 };
}

async function measure(label: string, command: string, args: string[], extra: NodeJS.ProcessEnv = {}): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'start-time-'));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, ...(await portsEnv()), ...extra, DATA_DIR: dataDir, LOG_LEVEL: 'warn', PATH: `${BIN}:${process.env.PATH}` };
    delete env.DATABASE_URL;
    const fresh = await run(command, args, env);
    const warm = await run(command, args, env);
    console.log(
      `${label.padEnd(44)} fresh ${fresh.upSeconds.toFixed(1).padStart(6)} s   warm ${warm.upSeconds.toFixed(1).padStart(6)} s   stop ${warm.stopSeconds.toFixed(1).padStart(5)} s`,
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

console.log(`Start time, ${os.availableParallelism()} cores, load average ${os.loadavg()[0].toFixed(2)}`);
// Make sure dist/ is current, so that "after" measures the start and not the build.
const built = spawnSync(process.execPath, ['--input-type=module', '-e', "const b = await import('./platform/supervisor/build.mjs'); if (b.staleReason()) b.build({ typeCheck: false });"], { cwd: ROOT, encoding: 'utf8' });
if (built.status !== 0) throw new Error(`build failed:\n${built.stderr}`);
const scratch = await mkdtemp(path.join(os.tmpdir(), 'start-time-dist-'));
const compileStarted = performance.now();
const compiled = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noCheck', '--outDir', scratch, '--tsBuildInfoFile', path.join(scratch, '.tsbuildinfo')], { cwd: ROOT, encoding: 'utf8' });
if (compiled.status !== 0) throw new Error(`compile failed:\n${compiled.stdout}${compiled.stderr}`);
console.log(`${'cold compile of dist/ (npm start after a change)'.padEnd(44)} ${((performance.now() - compileStarted) / 1000).toFixed(1).padStart(6)} s`);
await rm(scratch, { recursive: true, force: true });

await measure('before: one process, tsx', path.join(BIN, 'tsx'), ['platform/start.ts'], { SINGLE_PROCESS: 'true' });
await measure('supervised, tsx', path.join(BIN, 'tsx'), ['platform/start.ts']);
await measure('after: supervised, compiled (npm start)', 'node', ['platform/supervisor/launch.mjs']);
