import type { Logger } from 'pino';
import { loadConfig, type PlatformConfig } from './config.js';
import { createLogger } from '../core/logger.js';
import { openSharedDatabase } from './shared-database.js';

/**
 * Runs one service started apart (a subgraph, or the gateway): its database is DATABASE_URL or
 * the embedded one of a platform already running, and SIGINT/SIGTERM stop it cleanly.
 */
export async function runServiceApart(
  name: string,
  start: (config: PlatformConfig, databaseUrl: string, logger: Logger) => Promise<{ url: string; stop(): Promise<unknown> }>,
): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, name);
  const database = await openSharedDatabase(config);
  let service: { url: string; stop(): Promise<unknown> };
  try {
    service = await start(config, database.url, logger);
  } catch (error) {
    await database.stop();
    process.stderr.write(`\nCannot start ${name}: ${error instanceof Error ? error.message : String(error)}\n\n`);
    process.exit(1);
  }
  process.stdout.write(`${name} is up at ${service.url}\n`);
  stopOnSignal(logger, async () => {
    await service.stop();
    await database.stop();
  });
}

/** Stops once on the first SIGINT or SIGTERM, then exits 0. */
export function stopOnSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    try {
      await stop();
      logger.info('stopped');
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'stop failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}
