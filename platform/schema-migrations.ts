import type { Logger } from 'pino';
import { migrate, openOrm, type OrmOptions } from '../core/orm.js';
import { identityOrmOptions } from '../identity/index.js';
import { inferenceOrmOptions } from '../subgraphs/inference/mikro-orm.config.js';
import { marketplaceOrmOptions } from '../subgraphs/marketplace/mikro-orm.config.js';
import { membershipOrmOptions } from '../subgraphs/membership/mikro-orm.config.js';
import { tracerouteOrmOptions } from '../subgraphs/traceroute/mikro-orm.config.js';

type SchemaOptions = Pick<OrmOptions, 'schema' | 'entities' | 'migrations'>;

/** Every schema the platform owns, in the order the platform migrates them: the edge's keys first, then the subgraphs. */
export const PLATFORM_SCHEMAS: readonly SchemaOptions[] = [
  identityOrmOptions,
  membershipOrmOptions,
  marketplaceOrmOptions,
  inferenceOrmOptions,
  tracerouteOrmOptions,
];

/**
 * Brings every schema up to date and closes its connections: what a deployment runs once before
 * the services (a compose one-shot, a Helm hook Job), so replicas start on a ready database.
 * Returns the schemas it migrated, in order.
 */
export async function migrateAllSchemas(databaseUrl: string, logger?: Logger): Promise<string[]> {
  const done: string[] = [];
  for (const options of PLATFORM_SCHEMAS) {
    const orm = await openOrm({ clientUrl: databaseUrl, logger, poolMax: 1, ...options });
    try {
      await migrate(orm, databaseUrl, options.schema);
    } finally {
      await orm.close();
    }
    logger?.info({ schema: options.schema }, 'schema up to date');
    done.push(options.schema);
  }
  return done;
}
