import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mode } from '../../../core/principal.js';
import { enqueueWebhookEvents } from '../webhook/webhook-outbox.js';
import { addDays } from './member-period.js';
import { MemberStatus, today as todayUtc } from './member-status.js';
import { memberWebhookData } from './member-webhook-data.js';

/** How far back a lapse is still announced: the clock sweeps every minute, so a day would do; a month covers outages. */
const LOOK_BACK_DAYS = 31;

interface LapsedRow {
  id: string;
  account_id: string;
  mode: Mode;
  name: string;
  email: string;
  category_id: string | null;
  period_start: string;
  period_end: string;
  grace_ends_on: string;
}

/**
 * Sends `member.lapsed` for every current member whose grace has run out (LAPSED is computed from
 * the dates on every read; this tells endpoints once, when it happens). The row remembers the
 * grace end it was announced for, set in the statement that claims it, so instances sweeping at
 * once announce each lapse once, and a member who renews and lapses again is announced again.
 * Answers how many were announced; at most `batch` per call.
 */
export async function sendLapseNotices(em: EntityManager, on: string = todayUtc(), batch = 500): Promise<number> {
  return em.transactional(async (tx) => {
    const rows = await tx.execute<LapsedRow[]>(
      `update "membership"."member" set "lapse_notified_for" = "grace_ends_on"
        where "id" in (
          select "id" from "membership"."member"
           where "state" = 'current' and "deleted_at" is null
             and "grace_ends_on" < ? and "grace_ends_on" >= ?
             and "lapse_notified_for" is distinct from "grace_ends_on"
           limit ? for update skip locked)
        returning "id", "account_id", "mode", "name", "email", "category_id",
          to_char("period_start", 'YYYY-MM-DD') as "period_start", to_char("period_end", 'YYYY-MM-DD') as "period_end",
          to_char("grace_ends_on", 'YYYY-MM-DD') as "grace_ends_on"`,
      [on, addDays(on, -LOOK_BACK_DAYS), batch],
    );
    const byScope = new Map<string, LapsedRow[]>();
    for (const row of rows) byScope.set(`${row.account_id}:${row.mode}`, [...(byScope.get(`${row.account_id}:${row.mode}`) ?? []), row]);
    for (const scoped of byScope.values()) {
      const { account_id: accountId, mode } = scoped[0]!;
      await enqueueWebhookEvents(
        tx,
        { accountId, mode },
        'member.lapsed',
        scoped.map((row) => ({
          member: memberWebhookData({ id: row.id, name: row.name, email: row.email, categoryId: row.category_id, status: MemberStatus.LAPSED, periodStart: row.period_start, periodEnd: row.period_end, graceEndsOn: row.grace_ends_on }),
        })),
      );
    }
    return rows.length;
  });
}
