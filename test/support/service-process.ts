import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** The project's root, where services are started from. */
export const PROJECT_ROOT = path.resolve(import.meta.dirname, '../..');

/** The project's own tsx, which runs a service's TypeScript entry as `npm start` does. */
export const TSX = path.join(PROJECT_ROOT, 'node_modules/.bin/tsx');

/** A service started as its own process: its combined stdout and stderr so far, and its exit code once it exits. */
export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/**
 * Spawns `command` in the project root with `env` and the project's node_modules/.bin on PATH,
 * collecting its output. `detached` gives it a process group of its own, so a signal sent to the
 * group reaches it as a terminal's Ctrl-C would.
 */
export function spawnService(command: string, args: string[], env: NodeJS.ProcessEnv, options: { detached?: boolean } = {}): ServiceProcess {
  const child = spawn(command, args, {
    cwd: PROJECT_ROOT,
    env: { ...env, PATH: `${path.join(PROJECT_ROOT, 'node_modules/.bin')}:${env.PATH}` },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}
