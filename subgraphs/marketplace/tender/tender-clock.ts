import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { recordTransition } from '../audit/marketplace-audit.js';
import { BidStatus } from '../bid/bid-status.js';
import { Tender } from './tender.entity.js';
import { TenderStatus } from './tender-status.js';
import { assertTransition } from './tender-transitions.js';
import { raiseWebhookEvent } from '../webhook/marketplace-webhook-outbox.js';
import { tenderWebhookData } from './tender-webhook-data.js';

/**
 * The database's clock, `clock_timestamp()`: the one clock every deadline rule reads (the
 * bid check, the final check before commit, and the settling of expired tenders), so the
 * application servers' clocks never decide whether a bid was in time.
 */
export async function dbNow(em: EntityManager): Promise<Date> {
  const [row] = await em.execute<{ now: Date }[]>('select clock_timestamp() as now');
  return new Date(row.now);
}

/** Whether the locked tender's period is still open, compared in SQL at microsecond precision. */
export async function periodOpen(em: EntityManager, tenderId: string): Promise<boolean> {
  const [row] = await em.execute<{ open: boolean }[]>(
    'select clock_timestamp() < "tender_period_end" as "open" from "marketplace"."tender" where "id" = ?',
    [tenderId],
  );
  return Boolean(row?.open);
}

/**
 * Settles a tender already locked by `em`'s transaction if it is active and past its deadline:
 * evaluation with a valid bid, unsuccessful without one. Bids hold the same row lock until they
 * commit, so every bid accepted before the deadline is counted here, and none after.
 */
export async function settleLocked(em: EntityManager, tender: Tender): Promise<boolean> {
  if (tender.status !== TenderStatus.ACTIVE || (await periodOpen(em, tender.id))) return false;
  const [row] = await em.execute<{ valid: string }[]>(
    'select count(*) as "valid" from "marketplace"."bid" where "tender_id" = ? and "status" = ?',
    [tender.id, BidStatus.ACTIVE],
  );
  const to = Number(row.valid) > 0 ? TenderStatus.EVALUATION : TenderStatus.UNSUCCESSFUL;
  assertTransition(tender.status, to);
  recordTransition(em, {
    accountId: tender.accountId,
    mode: tender.mode,
    actor: 'system',
    subjectType: 'tender',
    subjectId: tender.id,
    from: tender.status,
    to,
    reason: to === TenderStatus.EVALUATION ? 'tender period ended' : 'tender period ended without a valid bid',
  });
  // Bids not confirmed under the current terms are excluded from the evaluation for good.
  tender.status = to;
  tender.updatedAt = new Date();
  // The buyer's endpoints learn it with the settling: the period is over, the count is no longer sealed.
  raiseWebhookEvent(em, tender, 'tender.period_closed', { tender: tenderWebhookData(tender, Number(row.valid)) });
  await em.flush();
  return true;
}

/** Settles the given tenders if due, each in its own short transaction under its row lock. */
export async function settleDue(em: EntityManager, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    await em.transactional(async (tx) => {
      const tender = await tx.findOne(Tender, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      if (tender) await settleLocked(tx, tender);
    });
  }
}

/** Ids of `mode`'s tenders still stored active whose deadline has passed (by the database clock). */
export async function dueTenderIds(em: EntityManager, mode: string, ids?: readonly string[]): Promise<string[]> {
  const rows = await em.execute<{ id: string }[]>(
    `select "id" from "marketplace"."tender" where "mode" = ? and "status" = 'active' and "tender_period_end" <= clock_timestamp()${ids ? ' and "id" = any(?::uuid[])' : ''} limit 500`,
    ids ? [mode, `{${ids.join(',')}}`] : [mode],
  );
  return rows.map((row) => row.id);
}
