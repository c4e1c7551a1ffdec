import type { FinanceReport } from './finance-report.js';
import type { ReportFigures } from './report-figures.js';

const COLUMNS = ['invoiced', 'payments', 'paymentCount', 'refunds', 'refundCount', 'revenue', 'outstanding', 'overdue'] as const;
const HEADER = ['currency', 'dimension', 'month', 'category_id', 'category_name', 'invoiced', 'payments', 'payment_count', 'refunds', 'refund_count', 'revenue', 'outstanding', 'overdue'];

/** RFC 4180 quoting; text a spreadsheet would run as a formula is prefixed with an apostrophe. */
function cell(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function line(values: (string | number | null)[]): string {
  return values.map(cell).join(',');
}

/** The report as CSV: per currency one `total` row, a `month` row per month and a `category` row per category. */
export function financeReportToCsv(report: FinanceReport): string {
  const figures = (f: ReportFigures) => COLUMNS.map((c) => f[c]);
  const rows = [line(HEADER)];
  for (const c of report.currencies) {
    rows.push(line([c.currency, 'total', null, null, null, ...figures(c.totals)]));
    for (const m of c.byMonth) rows.push(line([c.currency, 'month', m.month, null, null, ...figures(m)]));
    for (const k of c.byCategory) rows.push(line([c.currency, 'category', null, k.categoryId, k.categoryName, ...figures(k)]));
  }
  return `${rows.join('\r\n')}\r\n`;
}
