import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';

const RETRY_MS = 60_000;
const monthStart = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
const nextMonth = (start: Date) => new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));

/**
 * The monthly partitions of `inference.usage_record`. A month's partition is created before its
 * first rows are written, together with the next month's, so that rows rarely land in the default
 * partition (whose rows for a month would then stop that month's partition from being created).
 * Only months near now get a partition: a row with a skewed clock goes to the default one.
 */
export class UsagePartitions {
  private readonly created = new Set<string>();
  /** Partitions whose creation failed, and when to try again (not at every flush of an outage). */
  private readonly retryAt = new Map<string, number>();

  constructor(
    private readonly orm: MikroORM,
    private readonly logger: Logger,
  ) {}

  /** Creates the partitions of these times' months; a failure is logged and the rows go to the default partition. */
  async ensure(times: string[], now = new Date()): Promise<void> {
    const earliest = monthStart(new Date(now.getTime() - 31 * 86_400_000)).getTime();
    const latest = nextMonth(monthStart(now)).getTime();
    const months = new Set<number>();
    for (const iso of times) {
      const start = monthStart(new Date(iso));
      if (start.getTime() < earliest || start.getTime() > latest) continue;
      months.add(start.getTime());
      months.add(Math.min(nextMonth(start).getTime(), latest));
    }
    for (const month of [...months].sort()) {
      const from = new Date(month);
      const name = `usage_record_${from.toISOString().slice(0, 7).replace('-', '_')}`;
      if (this.created.has(name) || (this.retryAt.get(name) ?? 0) > now.getTime()) continue;
      try {
        await this.orm.em.fork().transactional(async (em) => {
          const connection = em.getConnection();
          const ctx = em.getTransactionContext();
          // Serialises concurrent recorders (several processes) creating the same month.
          await connection.execute(`select pg_advisory_xact_lock(hashtext(?))`, [`inference.${name}`], 'all', ctx);
          await connection.execute(
            `create table if not exists "inference"."${name}" partition of "inference"."usage_record" for values from ('${from.toISOString()}') to ('${nextMonth(from).toISOString()}')`,
            [],
            'run',
            ctx,
          );
        });
        this.created.add(name);
        this.retryAt.delete(name);
      } catch (error) {
        this.retryAt.set(name, now.getTime() + RETRY_MS);
        this.logger.warn({ err: error, partition: name }, 'usage partition not created; its rows go to the default partition');
      }
    }
  }
}
