import { randomInt } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from 'pino';

/** The first key of the two-key advisory locks that mark live edge processes (any fixed number no other lock uses). */
const OWNER_LOCK_SPACE = 0x1d_e7;

/**
 * Whether the edge process that claimed an Idempotency-Key is still alive, without heartbeats:
 * each process holds a session advisory lock of its own on a connection of its own, and
 * PostgreSQL releases it the moment that connection ends, when the process dies. A claim
 * records its owner's lock; a retry that finds the lock released knows nobody is running the
 * request and takes it over at once. Being wrong costs nothing stored: a subgraph decides whether
 * a write already committed (idempotent-mutations.plugin.ts).
 */
export class IdempotencyOwner {
  private lock: Promise<number> | undefined;
  private client: pg.Client | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly logger?: Logger,
  ) {}

  /** This process's lock, taken on first use and again after its connection was lost. */
  token(): Promise<number> {
    this.lock ??= this.take().catch((error: unknown) => {
      this.lock = undefined;
      throw error;
    });
    return this.lock;
  }

  /** Whether the process holding `token` still runs (its lock is held). */
  async isAlive(token: number | null | undefined): Promise<boolean> {
    if (token == null) return false;
    const rows = await this.orm.em.fork().execute<{ alive: boolean }[]>(
      `select exists (select 1 from pg_locks where locktype = 'advisory' and granted and classid = ? and objid = ? and objsubid = 2
         and database = (select oid from pg_database where datname = current_database())) as alive`,
      [OWNER_LOCK_SPACE, token >>> 0],
    );
    return rows[0]?.alive === true;
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.lock = undefined;
    await client?.end().catch(() => undefined);
  }

  private async take(): Promise<number> {
    const client = new pg.Client({ connectionString: String(this.orm.config.get('clientUrl')) });
    client.on('error', (error) => {
      // The database restarted or the connection broke: the lock is gone with it; take a new one when next needed.
      this.logger?.warn({ err: error }, 'lost the connection holding this edge process\'s Idempotency-Key lock');
      if (this.client === client) {
        this.client = undefined;
        this.lock = undefined;
      }
    });
    await client.connect();
    for (;;) {
      const token = randomInt(1, 2 ** 31 - 1);
      const { rows } = await client.query<{ taken: boolean }>('select pg_try_advisory_lock($1, $2) as taken', [OWNER_LOCK_SPACE, token]);
      if (rows[0]?.taken) {
        this.client = client;
        return token;
      }
    }
  }
}

const owners = new WeakMap<MikroORM, IdempotencyOwner>();

/** The one owner lock of this process for the key store `orm`. */
export function idempotencyOwnerFor(orm: MikroORM, logger?: Logger): IdempotencyOwner {
  let owner = owners.get(orm);
  if (!owner) owners.set(orm, (owner = new IdempotencyOwner(orm, logger)));
  return owner;
}
