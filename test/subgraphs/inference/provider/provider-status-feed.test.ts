import type { MikroORM } from '@mikro-orm/postgresql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InferenceConfig } from '../../../../subgraphs/inference/config/inference-config.js';
import { loadInferenceConfig } from '../../../../subgraphs/inference/config/load-inference-config.js';
import { inferenceOrmOptions } from '../../../../subgraphs/inference/mikro-orm.config.js';
import type { ProviderReport } from '../../../../subgraphs/inference/provider-registry/provider-registry.js';
import { ProviderStatusFeed } from '../../../../subgraphs/inference/provider/provider-status.feed.js';
import { PROVIDER_STATUS_TOPIC } from '../../../../subgraphs/inference/provider/provider.service.js';
import { migrate, openOrm } from '../../../../core/orm.js';
import { createPlatformPubSub, type PlatformPubSub } from '../../../../subgraphs/shared/pubsub.js';
import { createTestDatabase } from '../../../support/database.js';
import { capturedLogger } from '../../../support/captured-logger.js';

// Two ORMs on one database stand for two instances of the subgraph starting together.
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let orm: MikroORM;
let otherOrm: MikroORM;
let pubsub: PlatformPubSub;
const log = capturedLogger();
let feed: ProviderStatusFeed;

const config = loadInferenceConfig({});

beforeAll(async () => {
  db = await createTestDatabase();
  orm = await openOrm({ clientUrl: db.url, ...inferenceOrmOptions });
  otherOrm = await openOrm({ clientUrl: db.url, ...inferenceOrmOptions });
  await migrate(orm, db.url, inferenceOrmOptions.schema);
  pubsub = createPlatformPubSub();
  feed = new ProviderStatusFeed(orm, pubsub, log.logger);
});

afterAll(async () => {
  await feed?.settled();
  await orm?.close(true);
  await otherOrm?.close(true);
  await db?.drop();
});

beforeEach(async () => {
  await sql('delete from "inference"."provider"');
  log.lines.length = 0;
});

function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  return orm.em.getConnection().execute<T[]>(text, params, 'all');
}

const stored = () => sql('select "id", "name", "status", "capabilities", "interfaces" from "inference"."provider" order by "id"');


function report(id: string, status: ProviderReport['status'] = 'operational'): ProviderReport {
  return { id, name: id, status, inFlight: 0, maxConcurrency: null, models: 2, coolingDownUntil: null, engines: [] };
}

const reportsOf = (of: InferenceConfig, status: ProviderReport['status'] = 'operational') => of.providers.map((provider) => report(provider.id, status));

/** The configuration without one provider, on no interface either. */
function without(id: string): InferenceConfig {
  const drop = (providers: string[]) => providers.filter((provider) => provider !== id);
  const { serviceT, serviceI, proxy, gateway } = config.interfaces;
  return {
    ...config,
    providers: config.providers.filter((provider) => provider.id !== id),
    interfaces: {
      serviceT: { providers: drop(serviceT.providers) },
      serviceI: { ...serviceI, providers: drop(serviceI.providers) },
      proxy: { ...proxy, providers: drop(proxy.providers) },
      gateway: { ...gateway, providers: drop(gateway.providers) },
    },
  };
}

/** The topic's events from now on; the listener is attached before this returns, so nothing published after is missed. */
function listen() {
  const events = pubsub.subscribe(PROVIDER_STATUS_TOPIC)[Symbol.asyncIterator]();
  // The first next() attaches the listener; later ones read what has been buffered since.
  let pending = events.next();
  return {
    async next(): Promise<unknown> {
      const result = await pending;
      pending = events.next();
      return result.value;
    },
    stop: () => events.return?.(),
  };
}

const TEXT_AND_VISION = ['chat', 'completion', 'tokenize', 'vision'];

describe('the migrations', () => {
  it('leave none of the seeded rows of the retired services', async () => {
    const fresh = await createTestDatabase();
    const freshOrm = await openOrm({ clientUrl: fresh.url, ...inferenceOrmOptions });
    try {
      await migrate(freshOrm, fresh.url, inferenceOrmOptions.schema);
      expect(await freshOrm.em.getConnection().execute('select "id" from "inference"."provider"', [], 'all')).toEqual([]);
    } finally {
      await freshOrm.close(true);
      await fresh.drop();
    }
  });

  it('match the entities exactly', async () => {
    expect(await orm.schema.getUpdateSchemaSQL({ wrap: false, schema: inferenceOrmOptions.schema })).toBe('');
  });
});

describe('sync', () => {
  it('writes one row per provider of the default configuration, with the interfaces that route to it and its probed status', async () => {
    await feed.sync(config, [report('provider_a'), report('provider_b', 'degraded'), report('provider_c', 'down'), report('provider_d')]);
    expect(await stored()).toEqual([
      { id: 'provider_a', name: 'Provider A', status: 'operational', capabilities: TEXT_AND_VISION, interfaces: ['service_t', 'gateway'] },
      { id: 'provider_b', name: 'Provider B', status: 'degraded', capabilities: TEXT_AND_VISION, interfaces: ['gateway'] },
      { id: 'provider_c', name: 'Provider C', status: 'down', capabilities: TEXT_AND_VISION, interfaces: ['gateway'] },
      { id: 'provider_d', name: 'Provider D', status: 'operational', capabilities: TEXT_AND_VISION, interfaces: ['service_i', 'proxy', 'gateway'] },
    ]);
  });

  it('removes the row of a provider no longer configured and leaves the others', async () => {
    await feed.sync(config, reportsOf(config));
    await feed.sync(without('provider_c'), reportsOf(without('provider_c')));
    expect((await stored()).map((row) => row.id)).toEqual(['provider_a', 'provider_b', 'provider_d']);
  });

  it('rewrites rows that changed in the configuration, such as a renamed provider or one moved off an interface', async () => {
    await feed.sync(config, reportsOf(config));
    const changed = without('provider_a');
    changed.providers = [...changed.providers, { ...config.providers[0], name: 'Provider A, renamed' }];
    await feed.sync(changed, reportsOf(changed));
    expect((await stored()).find((row) => row.id === 'provider_a')).toMatchObject({ name: 'Provider A, renamed', interfaces: [] });
  });

  it('is idempotent', async () => {
    await feed.sync(config, reportsOf(config));
    const first = await stored();
    await feed.sync(config, reportsOf(config));
    expect(await stored()).toEqual(first);
    expect(first).toHaveLength(4);
  });

  it('succeeds from several instances at once, on an empty table and on a full one', async () => {
    const other = new ProviderStatusFeed(otherOrm, pubsub, log.logger);
    for (let round = 0; round < 3; round++) {
      await Promise.all([feed.sync(config, reportsOf(config)), other.sync(config, reportsOf(config)), feed.sync(config, reportsOf(config))]);
      expect((await stored()).map((row) => row.id)).toEqual(['provider_a', 'provider_b', 'provider_c', 'provider_d']);
    }
    expect(log.lines.filter((line) => Number(line.level) >= 40)).toEqual([]);
  });

  it('keeps the stored status of a provider it has no report for', async () => {
    await feed.sync(config, reportsOf(config, 'down'));
    await feed.sync(config, [report('provider_a')]);
    expect((await stored()).map((row) => [row.id, row.status])).toEqual([
      ['provider_a', 'operational'],
      ['provider_b', 'down'],
      ['provider_c', 'down'],
      ['provider_d', 'down'],
    ]);
  });

  it('publishes the providers whose stored status it changed, and only those', async () => {
    await feed.sync(config, reportsOf(config));
    const events = listen();
    try {
      await feed.sync(config, [report('provider_a'), report('provider_b', 'down'), report('provider_c'), report('provider_d')]);
      // The marker is published after the sync: had it published more than provider_b, those come first.
      pubsub.publish(PROVIDER_STATUS_TOPIC, { id: 'marker' });
      expect(await events.next()).toEqual({ id: 'provider_b' });
      expect(await events.next()).toEqual({ id: 'marker' });
    } finally {
      await events.stop();
    }
  });

  it('rejects when the database refuses, and the feed goes on working', async () => {
    await expect(feed.sync(config, [report('provider_a', 'exploded' as ProviderReport['status'])])).rejects.toThrow(/provider_status_check/);
    await feed.sync(config, reportsOf(config));
    expect(await stored()).toHaveLength(4);
  });
});

describe('changed', () => {
  beforeEach(async () => {
    await feed.sync(config, reportsOf(config));
  });

  it('stores the new status before it publishes the change', async () => {
    const events = listen();
    try {
      feed.changed(report('provider_b', 'down'));
      expect(await events.next()).toEqual({ id: 'provider_b' });
      expect((await stored()).find((row) => row.id === 'provider_b')?.status).toBe('down');
    } finally {
      await events.stop();
    }
  });

  it('applies quick successive changes in order, so the last one stays', async () => {
    const events = listen();
    try {
      feed.changed(report('provider_a', 'degraded'));
      feed.changed(report('provider_a', 'down'));
      feed.changed(report('provider_a', 'operational'));
      feed.changed(report('provider_a', 'down'));
      for (let i = 0; i < 4; i++) expect(await events.next()).toEqual({ id: 'provider_a' });
      expect((await stored()).find((row) => row.id === 'provider_a')?.status).toBe('down');
    } finally {
      await events.stop();
    }
  });

  it('logs a change the database refuses, throws nothing, publishes nothing, and carries on with the next', async () => {
    const events = listen();
    try {
      expect(() => feed.changed(report('provider_c', 'exploded' as ProviderReport['status']))).not.toThrow();
      feed.changed(report('provider_d', 'degraded'));
      // Events come in publication order: had the refused change been published, it would come first.
      expect(await events.next()).toEqual({ id: 'provider_d' });
      expect(log.lines).toContainEqual(expect.objectContaining({ level: 50, provider: 'provider_c', status: 'exploded', msg: 'provider status change not stored' }));
      expect((await stored()).map((row) => row.status)).toEqual(['operational', 'operational', 'operational', 'degraded']);
    } finally {
      await events.stop();
    }
  });

  it('publishes nothing for a provider without a row, and says so in the log', async () => {
    const events = listen();
    try {
      feed.changed(report('provider_z', 'down'));
      feed.changed(report('provider_a', 'down'));
      expect(await events.next()).toEqual({ id: 'provider_a' });
      expect(log.lines).toContainEqual(expect.objectContaining({ level: 40, provider: 'provider_z' }));
      expect((await stored()).map((row) => row.id)).toEqual(['provider_a', 'provider_b', 'provider_c', 'provider_d']);
    } finally {
      await events.stop();
    }
  });

  it('waits for a sync under way, so a change during a start is not overwritten by it', async () => {
    const syncing = feed.sync(config, reportsOf(config));
    feed.changed(report('provider_c', 'down'));
    await syncing;
    await feed.settled();
    expect((await stored()).find((row) => row.id === 'provider_c')?.status).toBe('down');
  });
});
