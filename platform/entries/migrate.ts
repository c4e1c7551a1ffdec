import { loadConfig } from '../config.js';
import { createLogger } from '../../core/logger.js';
import { openSharedDatabase } from '../shared-database.js';
import { migrateAllSchemas } from '../schema-migrations.js';

/**
 * One-shot: migrates every schema at DATABASE_URL (or the embedded database, as the other entries
 * find it), then exits 0; exits 1 naming the failure. Deployments run it before the services.
 */
const config = loadConfig();
const logger = createLogger(config.logLevel, 'migrate');
let database;
try {
  database = await openSharedDatabase(config);
  const schemas = await migrateAllSchemas(database.url, logger);
  process.stdout.write(`Migrated ${schemas.join(', ')}\n`);
  await database.stop();
  process.exit(0);
} catch (error) {
  await database?.stop().catch(() => {});
  process.stderr.write(`\nCannot migrate: ${error instanceof Error ? error.message : String(error)}\n\n`);
  process.exit(1);
}
