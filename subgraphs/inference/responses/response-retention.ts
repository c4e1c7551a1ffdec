import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { HourlySweep } from '../../../core/hourly-sweep.js';

/** OpenAI keeps a stored response 30 days. */
export const DEFAULT_RESPONSE_RETENTION_DAYS = 30;

/**
 * Deletes kept responses past their expiry, hourly (usage retention's rhythm). The store already
 * answers an expired response 404; the sweep only frees the rows. Every instance sweeps: a DELETE
 * by expiry is idempotent, so two at once do no harm.
 */
export class ResponseRetention {
  private readonly hourly = new HourlySweep(
    () => this.sweep(),
    (error) => this.logger.warn({ err: error }, 'stored responses sweep failed; it runs again within the hour'),
  );

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
  ) {}

  /** Sweeps a minute after the start (not during it), then hourly. */
  start(): void {
    this.hourly.start();
  }

  /** Deletes the responses expired as of `now`; returns how many went. */
  async sweep(now = new Date()): Promise<number> {
    const result = await this.orm.em.getConnection().execute<{ affectedRows?: number }>(`delete from "inference"."stored_response" where "expires_at" <= ?`, [now], 'run');
    const deleted = (result as { affectedRows?: number }).affectedRows ?? 0;
    if (deleted) this.logger.info({ deleted }, 'stored responses past their retention removed');
    return deleted;
  }

  /** Stops the sweeps and waits for one under way. */
  close(): Promise<void> {
    return this.hourly.close();
  }
}
