import pg from 'pg';
import type { PlatformConfig } from './config.js';
import { embeddedPlatformUrl, openPlatformDatabase, type RunningDatabase } from './database.js';
import { DatabaseUnreachableError } from './database-unreachable.error.js';

/** Connects once and hangs up: `undefined` when the database answered, else the reason. */
async function probe(url: string): Promise<NodeJS.ErrnoException | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  // A server going away mid-probe emits 'error' on the client; the awaited call reports it.
  client.on('error', () => {});
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return error as NodeJS.ErrnoException;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The platform's database for a command or a service started apart: DATABASE_URL when set; otherwise the embedded server
 * of a running platform; otherwise the embedded server under DATA_DIR, started now and stopped
 * again by `stop()`.
 */
export async function openSharedDatabase(config: PlatformConfig): Promise<RunningDatabase> {
  const options = { databaseUrl: config.databaseUrl, dataDir: config.dataDir, embeddedPort: config.embeddedDatabasePort };
  if (config.databaseUrl) return openPlatformDatabase(options);
  const url = embeddedPlatformUrl(config.embeddedDatabasePort, config.dataDir);
  const failure = await probe(url);
  // The platform's server stays up after the command: it is not ours to stop.
  if (!failure) return { url, embedded: true, stop: async () => {} };
  if (failure.code !== 'ECONNREFUSED') {
    throw new DatabaseUnreachableError(
      `127.0.0.1:${config.embeddedDatabasePort} does not answer as the platform's database (${failure.message}); ` +
        'set EMBEDDED_PG_PORT to the platform\'s port or DATABASE_URL to your PostgreSQL',
    );
  }
  return openPlatformDatabase(options);
}
