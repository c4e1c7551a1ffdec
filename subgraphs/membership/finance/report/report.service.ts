import type { EntityManager } from '@mikro-orm/postgresql';
import type { Principal } from '../../../../core/principal.js';
import { DomainError } from '../../../../core/errors.js';
import { CategoryService } from '../../category/category.service.js';
import { addMonths, isCalendarDate } from '../../member/member-period.js';
import { today } from '../../member/member-status.js';
import { CategoryFigures } from './category-figures.js';
import { CurrencyReport } from './currency-report.js';
import type { FinanceReport } from './finance-report.js';
import { MonthFigures } from './month-figures.js';
import { ReportFigures } from './report-figures.js';
import type { FinanceReportArgs } from './report.inputs.js';

interface FactRow {
  currency: string;
  month: string;
  category_id: string | null;
  invoiced: string;
  payments: string;
  payment_count: string;
  refunds: string;
  refund_count: string;
  outstanding: string;
  overdue: string;
}

/**
 * One pass over each table, grouped by currency, month and category in the database. Money is
 * bucketed by the day it moved: invoices by issue date, payments by received time, refunds by
 * the time they were made (UTC). Outstanding and overdue are today's open balances of the
 * invoices issued in the window.
 */
export const REPORT_SQL = `
with window_bounds as (
  select ?::date as first_day, ?::date as last_day,
         (?::date)::timestamp at time zone 'UTC' as starts, ((?::date) + 1)::timestamp at time zone 'UTC' as ends
), facts as (
  select i.currency, to_char(i.issued_on, 'YYYY-MM') as month, i.category_id,
         case when i.status in ('open', 'paid', 'uncollectible') then i.total else 0 end as invoiced,
         0 as payments, 0 as payment_count, 0 as refunds, 0 as refund_count,
         case when i.status = 'open' then i.total - i.amount_paid + i.amount_refunded else 0 end as outstanding,
         case when i.status = 'open' and i.due_on < ?::date then i.total - i.amount_paid + i.amount_refunded else 0 end as overdue
    from "membership"."invoice" i, window_bounds w
   where i.account_id = ? and i.mode = ? and i.issued_on between w.first_day and w.last_day
  union all
  select p.currency, to_char(p.received_at at time zone 'UTC', 'YYYY-MM'), p.category_id, 0, p.amount, 1, 0, 0, 0, 0
    from "membership"."payment" p, window_bounds w
   where p.account_id = ? and p.mode = ? and p.received_at >= w.starts and p.received_at < w.ends
  union all
  select r.currency, to_char(r.created_at at time zone 'UTC', 'YYYY-MM'), r.category_id, 0, 0, 0, r.amount, 1, 0, 0
    from "membership"."refund" r, window_bounds w
   where r.account_id = ? and r.mode = ? and r.created_at >= w.starts and r.created_at < w.ends
)
select currency, month, category_id,
       sum(invoiced)::bigint as invoiced, sum(payments)::bigint as payments, sum(payment_count)::bigint as payment_count,
       sum(refunds)::bigint as refunds, sum(refund_count)::bigint as refund_count,
       sum(outstanding)::bigint as outstanding, sum(overdue)::bigint as overdue
  from facts
 group by currency, month, category_id`;

function add(target: ReportFigures, row: FactRow): void {
  target.invoiced += Number(row.invoiced);
  target.payments += Number(row.payments);
  target.paymentCount += Number(row.payment_count);
  target.refunds += Number(row.refunds);
  target.refundCount += Number(row.refund_count);
  target.outstanding += Number(row.outstanding);
  target.overdue += Number(row.overdue);
  target.revenue = target.payments - target.refunds;
}

function monthsBetween(from: string, to: string): string[] {
  const months: string[] = [];
  for (let m = `${from.slice(0, 7)}-01`; m.slice(0, 7) <= to.slice(0, 7); m = addMonths(m, 1)) months.push(m.slice(0, 7));
  return months;
}

function invalid(param: string, message: string): DomainError {
  return new DomainError('BAD_USER_INPUT', message, { param, reason: 'invalid_parameter' });
}

/** Finance reports of the principal's account and mode. */
export class ReportService {
  constructor(
    private readonly em: EntityManager,
    private readonly principal: Principal,
  ) {}

  async report(args: FinanceReportArgs, asOf: string = today()): Promise<FinanceReport> {
    if (!isCalendarDate(args.from)) throw invalid('from', 'from must be a date (YYYY-MM-DD)');
    if (!isCalendarDate(args.to)) throw invalid('to', 'to must be a date (YYYY-MM-DD)');
    if (args.to < args.from) throw invalid('to', 'to must not be before from');
    if (args.to >= addMonths(args.from, 120)) throw invalid('to', 'A report covers at most 10 years');
    const { accountId, mode } = this.principal;
    const rows = await this.em.execute<FactRow[]>(REPORT_SQL, [
      args.from, args.to, args.from, args.to, asOf, accountId, mode, accountId, mode, accountId, mode,
    ]);
    const categoryIds = [...new Set(rows.map((r) => r.category_id).filter((id): id is string => id !== null))];
    const categories = await new CategoryService(this.em, this.principal).findMany(categoryIds);
    const names = new Map(categories.filter((c) => c !== null).map((c) => [c.id, c.name]));
    const months = monthsBetween(args.from, args.to);

    const byCurrency = new Map<string, { totals: ReportFigures; months: Map<string, MonthFigures>; categories: Map<string | null, CategoryFigures> }>();
    for (const row of rows) {
      let entry = byCurrency.get(row.currency);
      if (!entry) {
        entry = {
          totals: new ReportFigures(),
          months: new Map(months.map((month) => [month, Object.assign(new MonthFigures(), { month })])),
          categories: new Map(),
        };
        byCurrency.set(row.currency, entry);
      }
      add(entry.totals, row);
      add(entry.months.get(row.month)!, row);
      let category = entry.categories.get(row.category_id);
      if (!category) {
        category = Object.assign(new CategoryFigures(), { categoryId: row.category_id, categoryName: row.category_id ? (names.get(row.category_id) ?? null) : null });
        entry.categories.set(row.category_id, category);
      }
      add(category, row);
    }
    const currencies = [...byCurrency.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([currency, entry]) =>
        Object.assign(new CurrencyReport(), {
          currency,
          totals: entry.totals,
          byMonth: [...entry.months.values()],
          byCategory: [...entry.categories.values()].sort((a, b) => (a.categoryName ?? '\uffff').localeCompare(b.categoryName ?? '\uffff')),
        }),
      );
    return { from: args.from, to: args.to, asOf, currencies };
  }
}

