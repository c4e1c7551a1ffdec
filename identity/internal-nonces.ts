import type { MikroORM } from '@mikro-orm/postgresql';
import { MAX_SIGNATURE_AGE_SECONDS } from '../core/key-store.js';

/**
 * How long a claimed nonce is kept: its signature is accepted from five minutes ahead to five
 * minutes behind the edge's clock, so ten minutes cover every acceptance; one more for clocks apart.
 */
const KEEP_MS = (2 * MAX_SIGNATURE_AGE_SECONDS + 60) * 1000;
/** How often a process sweeps the expired ones, at most. */
const SWEEP_EVERY_MS = 60_000;

/**
 * One use per signed internal call. The signature (core/key-store.ts) proves the sender holds
 * INTERNAL_SECRET and bounds the call to five minutes; within those, whoever captured it could
 * send it again (an `enableKey` after the key was disabled, say). Each call carries a random
 * nonce under its signature, and the edge claims it in the identity schema before acting: a row
 * per nonce, so every edge worker and every instance on the database sees the same claims.
 * Key management calls are rare (no request's authentication goes through here), so one insert
 * each costs nothing that matters.
 */
export class InternalNonces {
  private sweptAt = 0;

  constructor(private readonly orm: MikroORM) {}

  /** True the first time `nonce` is claimed; false for a replay. */
  async claim(nonce: string, now = new Date()): Promise<boolean> {
    const connection = this.orm.em.getConnection();
    const inserted = await connection.execute<{ nonce: string }[]>(
      `insert into "identity"."internal_nonce" ("nonce", "seen_at") values (?, ?) on conflict ("nonce") do nothing returning "nonce"`,
      [nonce, now],
    );
    if (now.getTime() - this.sweptAt > SWEEP_EVERY_MS) {
      this.sweptAt = now.getTime();
      await connection.execute(`delete from "identity"."internal_nonce" where "seen_at" < ?`, [new Date(now.getTime() - KEEP_MS)]);
    }
    return inserted.length === 1;
  }
}
