import { existsSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { pino, type Logger } from 'pino';
import { initialiseCluster, postgresPrograms, postgresRunAs, supervisedPostgres } from './embedded-postgres.js';
import { adoptSuperuserPassword, provisionServiceRole, SERVICE_ROLE } from './embedded-database-roles.js';
import { persistentSecret } from './persistent-secret.js';
import { ServiceExitedError } from './supervisor/service-exited.error.js';
import type { SupervisedService } from './supervisor/supervised-service.js';

export interface RunningDatabase {
  /** Connection string of the platform database (schemas per subgraph live inside it), as the services connect. */
  url: string;
  embedded: boolean;
  /** The embedded server's superuser, for making databases (benchmarks, tests); never given to a service. */
  superuserUrl?: string;
  stop(): Promise<void>;
}

/** The role initdb makes; it only makes databases and roles (and owns nothing of the platform's). */
const SUPERUSER = 'platform';
const PLATFORM_DATABASE = 'platform';
/** Beside DATA_DIR/postgres, readable by this user alone, kept across restarts. */
const SUPERUSER_PASSWORD_FILE = 'postgres-superuser-password';
const SERVICE_PASSWORD_FILE = 'postgres-service-password';

/**
 * Where the services reach the platform's embedded PostgreSQL on `port`, as the role that owns
 * the platform's schemas (its password made under `dataDir` on first use).
 */
export function embeddedPlatformUrl(port: number, dataDir: string): string {
  const password = persistentSecret(path.join(dataDir, SERVICE_PASSWORD_FILE));
  return `postgres://${SERVICE_ROLE}:${encodeURIComponent(password)}@127.0.0.1:${port}/${PLATFORM_DATABASE}`;
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
 * Starts the embedded PostgreSQL under `dir` (initialising it on first use) as a supervised
 * process, restarted with backoff whenever it dies, and returns the superuser's URL. Its password
 * is kept in a file beside `dir` (mode 0600); a directory made with the former fixed password
 * is moved to it. As root, PostgreSQL runs as the `postgres` system user, which owns `dir`.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  logger?: Logger;
}): Promise<{ serverUrl: string; server: SupervisedService; stop(): Promise<void> }> {
  const programs = await postgresPrograms();
  if (!(await portIsFree(options.port))) {
    throw new Error(
      `The embedded PostgreSQL cannot listen on 127.0.0.1:${options.port}: the port is in use ` +
        `(is the platform already running with DATA_DIR=${path.dirname(options.dir)}?). ` +
        'Set EMBEDDED_PG_PORT to another port, or DATABASE_URL to use your own PostgreSQL.',
    );
  }
  const logger = options.logger ?? pino({ enabled: false });
  const runAs = await postgresRunAs();
  await mkdir(path.dirname(options.dir), { recursive: true });
  // PostgreSQL runs as the unprivileged `postgres` user under root: it must reach its directory.
  if (runAs) await chmod(path.dirname(options.dir), 0o755);
  const password = persistentSecret(path.join(path.dirname(options.dir), SUPERUSER_PASSWORD_FILE));
  if (!existsSync(path.join(options.dir, 'PG_VERSION'))) {
    logger.info({ dir: options.dir }, 'initialising the embedded PostgreSQL');
    await initialiseCluster({ dir: options.dir, superuser: SUPERUSER, password, runAs, logger });
  }
  const { server, lastOutput } = supervisedPostgres({ postgres: programs.postgres, dir: options.dir, port: options.port, runAs, logger });
  // However this process ends (short of SIGKILL), the server is asked to stop with it.
  const stopWithProcess = () => {
    if (server.pid) process.kill(server.pid, 'SIGINT');
  };
  process.once('exit', stopWithProcess);
  const stop = async () => {
    await server.stop();
    process.off('exit', stopWithProcess);
  };
  try {
    await server.start().catch((error: unknown) => {
      throw error instanceof ServiceExitedError ? new Error(`${error.message}: ${lastOutput().join('\n') || 'it said nothing'}`) : error;
    });
    const serverUrl = `postgres://${SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${options.port}/postgres`;
    await adoptSuperuserPassword(serverUrl, logger);
    return { serverUrl, server, stop };
  } catch (error) {
    await stop();
    throw error;
  }
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
    const url = embeddedPlatformUrl(options.embeddedPort, options.dataDir);
    await provisionServiceRole(embedded.serverUrl, { url, database: PLATFORM_DATABASE });
    return { url, embedded: true, superuserUrl: embedded.serverUrl, stop: embedded.stop };
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}
