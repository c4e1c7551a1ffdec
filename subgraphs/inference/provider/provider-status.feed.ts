import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { PlatformPubSub } from '../../shared/pubsub.js';
import type { InferenceConfig } from '../config/inference-config.js';
import type { InterfaceName, ProviderReport } from '../provider-registry/provider-registry.js';
import { UsageInterface } from '../usage/usage-interface.js';
import { PROVIDER_STATUS_TOPIC } from './provider.service.js';

// The configuration's interface names to the values usage records and provider rows store.
const STORED_INTERFACE: Record<InterfaceName, UsageInterface> = {
  serviceT: UsageInterface.SERVICE_T,
  serviceI: UsageInterface.SERVICE_I,
  proxy: UsageInterface.PROXY,
  gateway: UsageInterface.GATEWAY,
};

// Every instance of the subgraph syncs at start; the lock makes concurrent syncs run one after
// the other, so two configurations never interleave row by row (nor deadlock on each other's rows).
const SYNC_LOCK = 'inference.provider.sync';

// Ordered by id so that concurrent upserts take row locks in one order.
const UPSERT = `insert into "inference"."provider" ("id", "name", "capabilities", "interfaces")
  select r."id", r."name", r."capabilities", r."interfaces"
  from jsonb_to_recordset(?::jsonb) as r("id" text, "name" text, "capabilities" text[], "interfaces" text[])
  order by r."id"
  on conflict ("id") do update set "name" = excluded."name", "capabilities" = excluded."capabilities", "interfaces" = excluded."interfaces"`;

const SET_STATUSES = `update "inference"."provider" p set "status" = r."status"
  from jsonb_to_recordset(?::jsonb) as r("id" text, "status" text)
  where p."id" = r."id" and p."status" is distinct from r."status"
  returning p."id"`;

const DELETE_UNCONFIGURED = `delete from "inference"."provider" p
  where not exists (select 1 from jsonb_to_recordset(?::jsonb) as r("id" text) where r."id" = p."id")`;

const SET_STATUS = `update "inference"."provider" set "status" = ? where "id" = ? returning "id"`;

/**
 * Keeps the provider rows in step with the inference configuration and the registry's health
 * probes, and tells `providerStatusChanged` subscribers of each probe-driven change. Writes run
 * one at a time in call order, so a quick degraded-then-down never lands as degraded.
 */
export class ProviderStatusFeed {
  private readonly logger: Logger;
  // Never rejects: each step catches its own failure, so one bad write does not stop the next.
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly orm: MikroORM,
    private readonly pubsub: PlatformPubSub,
    logger: Logger,
  ) {
    this.logger = logger.child({ component: 'provider-status-feed' });
  }

  /**
   * One row per configured provider (name, capabilities, interfaces, and the status of its report;
   * a provider without a report keeps its stored status), and none for a provider no longer
   * configured. Safe to run from several instances at once; rejects when the database does.
   */
  sync(config: InferenceConfig, reports: readonly ProviderReport[]): Promise<void> {
    const run = this.queue.then(() => this.write(config, reports));
    this.queue = run.catch(() => {});
    return run;
  }

  /** Stores a probe-driven status change and then publishes it; in the background, failures are logged and never thrown. */
  changed(report: ProviderReport): void {
    this.queue = this.queue.then(() => this.store(report)).catch((error: unknown) => {
      this.logger.error({ err: error, provider: report.id, status: report.status }, 'provider status change not stored');
    });
  }

  /** Resolves once every sync and change called so far is written (and published): await it before closing the ORM. */
  async settled(): Promise<void> {
    let seen: Promise<void>;
    do {
      seen = this.queue;
      await seen;
    } while (seen !== this.queue);
  }

  private async write(config: InferenceConfig, reports: readonly ProviderReport[]): Promise<void> {
    const rows = config.providers.map((provider) => ({
      id: provider.id,
      name: provider.name,
      capabilities: provider.capabilities,
      interfaces: (Object.keys(STORED_INTERFACE) as InterfaceName[]).filter((name) => config.interfaces[name].providers.includes(provider.id)).map((name) => STORED_INTERFACE[name]),
    }));
    const configured = new Set(rows.map((row) => row.id));
    const statuses = reports.filter((report) => configured.has(report.id)).map((report) => ({ id: report.id, status: report.status }));
    const changed = await this.orm.em.fork().transactional(async (em) => {
      const connection = em.getConnection();
      const ctx = em.getTransactionContext();
      await connection.execute('select pg_advisory_xact_lock(hashtext(?))', [SYNC_LOCK], 'all', ctx);
      await connection.execute(UPSERT, [JSON.stringify(rows)], 'run', ctx);
      const updated = await connection.execute<{ id: string }[]>(SET_STATUSES, [JSON.stringify(statuses)], 'all', ctx);
      await connection.execute(DELETE_UNCONFIGURED, [JSON.stringify(rows)], 'run', ctx);
      return updated.map((row) => row.id);
    });
    // A restart may find a status other than the one stored (an instance's last probe, an
    // admin's override): subscribers hear of it like of any other change, after the commit.
    for (const id of changed) this.pubsub.publish(PROVIDER_STATUS_TOPIC, { id });
  }

  private async store(report: ProviderReport): Promise<void> {
    const rows = await this.orm.em.getConnection().execute<{ id: string }[]>(SET_STATUS, [report.status, report.id], 'all');
    if (rows.length === 0) {
      this.logger.warn({ provider: report.id }, 'status change of a provider without a row (not synced, or no longer configured)');
      return;
    }
    this.pubsub.publish(PROVIDER_STATUS_TOPIC, { id: report.id });
  }
}
