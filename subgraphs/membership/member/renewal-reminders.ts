import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mode } from '../../../core/principal.js';
import { enqueueWebhookEvents } from '../webhook/webhook-outbox.js';
import { addDays } from './member-period.js';
import { memberStatusOf, today as todayUtc } from './member-status.js';
import { memberWebhookData } from './member-webhook-data.js';

/**
 * Due for renewal on `on`: current (ACTIVE or GRACE) with a period that ends within `leadDays`.
 * A filter on stored columns, as `statusConditions` are, for the list and the reminder sweep alike.
 */
export function renewalDueCondition(on: string, leadDays: number): Record<string, unknown> {
  return { state: 'current', periodEnd: { $ne: null, $lte: addDays(on, leadDays) }, graceEndsOn: { $gte: on } };
}

interface DueRow {
  id: string;
  account_id: string;
  mode: Mode;
  name: string;
  email: string;
  category_id: string | null;
  state: 'current';
  period_start: string;
  period_end: string;
  grace_ends_on: string;
}

/**
 * Sends `member.renewal_due` for every member that became due for renewal (see
 * `renewalDueCondition`), once per period end: the member row remembers the period end it was
 * reminded of, set in the statement that claims it, so instances sweeping at once never remind
 * twice (a row another is claiming is skipped, and is no longer due once that one commits).
 * Answers how many were reminded; at most `batch` per call.
 */
export async function sendRenewalReminders(em: EntityManager, leadDays: number, on: string = todayUtc(), batch = 500): Promise<number> {
  return em.transactional(async (tx) => {
    const rows = await tx.execute<DueRow[]>(
      `update "membership"."member" set "renewal_reminded_for" = "period_end"
        where "id" in (
          select "id" from "membership"."member"
           where "state" = 'current' and "deleted_at" is null and "period_end" is not null
             and "period_end" <= ? and "period_end" >= ? and "grace_ends_on" >= ?
             and "renewal_reminded_for" is distinct from "period_end"
           limit ? for update skip locked)
        returning "id", "account_id", "mode", "name", "email", "category_id", "state",
          to_char("period_start", 'YYYY-MM-DD') as "period_start", to_char("period_end", 'YYYY-MM-DD') as "period_end",
          to_char("grace_ends_on", 'YYYY-MM-DD') as "grace_ends_on"`,
      // The lower bound only narrows the index range: grace is at most 366 days.
      [addDays(on, leadDays), addDays(on, -367), on, batch],
    );
    const byScope = new Map<string, DueRow[]>();
    for (const row of rows) byScope.set(`${row.account_id}:${row.mode}`, [...(byScope.get(`${row.account_id}:${row.mode}`) ?? []), row]);
    for (const scoped of byScope.values()) {
      const { account_id: accountId, mode } = scoped[0]!;
      await enqueueWebhookEvents(
        tx,
        { accountId, mode },
        'member.renewal_due',
        scoped.map((row) => {
          const columns = { state: row.state, periodEnd: row.period_end, graceEndsOn: row.grace_ends_on };
          return {
            member: memberWebhookData({ id: row.id, name: row.name, email: row.email, categoryId: row.category_id, status: memberStatusOf(columns, on), periodStart: row.period_start, periodEnd: row.period_end, graceEndsOn: row.grace_ends_on }),
          };
        }),
      );
    }
    return rows.length;
  });
}
