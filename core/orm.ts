import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { MigrationObject } from '@mikro-orm/core';
import pg from 'pg';
import type { Logger } from 'pino';

export interface OrmOptions {
  clientUrl: string;
  /** The PostgreSQL schema this service owns; nothing outside it is read or written. */
  schema: string;
  entities: NonNullable<Options['entities']>;
  migrations: MigrationObject[];
  logger?: Logger;
  poolMax?: number;
  /** Called with every SQL statement the ORM runs (tests count statements with it). */
  onQuery?: (sql: string) => void;
}

/**
 * Opens a MikroORM instance confined to one PostgreSQL schema, with migrations listed in code
 * (no file globbing, so the same list runs under tsx, vitest and a bundled build).
 */
export async function openOrm(options: OrmOptions): Promise<MikroORM> {
  const traced = options.logger?.isLevelEnabled('trace') ? options.logger : undefined;
  const orm = await MikroORM.init({
    clientUrl: options.clientUrl,
    schema: options.schema,
    entities: options.entities,
    extensions: [Migrator],
    // Relations and references loaded in one request are batched into one query each.
    dataloader: true,
    forceUtcTimezone: true,
    // Entities are made by em.create() or loaded, never by `new` and then related, so the
    // setters MikroORM otherwise puts on every entity prototype (to propagate relations set on
    // unmanaged entities) serve nothing here. They redefined each property on each loaded
    // entity: about 5% of the membership subgraph's CPU serving a page of 20 members.
    propagationOnPrototype: false,
    pool: { min: 0, max: options.poolMax ?? 10 },
    migrations: {
      schema: options.schema,
      tableName: 'mikro_orm_migrations',
      migrationsList: options.migrations,
      transactional: true,
      snapshot: false,
      silent: true,
    },
    ...(options.onQuery
      ? { debug: ['query' as const], logger: (message: string) => options.onQuery!(message) }
      : traced
        ? // Statements only ('query' without 'query-params'): their values are tokens and hashes.
          { debug: ['query' as const], colors: false, logger: (message: string) => traced.trace(message) }
        : { debug: false }),
  });
  return orm;
}

/** Brings the service's schema up to date; safe to run from several instances at once. */
export async function migrate(orm: MikroORM, clientUrl: string, schema: string): Promise<void> {
  // A session-level advisory lock, held on a connection of its own (a pooled one could be
  // handed back with the lock still held), serialises concurrent starts of one service.
  const lock = new pg.Client({ connectionString: clientUrl });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock(hashtext($1))', [schema]);
    await lock.query(`create schema if not exists "${schema}"`);
    await orm.migrator.up();
  } finally {
    await lock.end();
  }
}
