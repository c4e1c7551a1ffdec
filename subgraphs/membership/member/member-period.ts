import type { PeriodRule } from '../category/category-period.js';
export type { PeriodRule };

/** Calendar arithmetic on YYYY-MM-DD strings, in UTC so no time zone shifts a day. */
function parse(date: string): Date {
  return new Date(`${date}T00:00:00.000Z`);
}

function format(date: Date): string {
  return date.toISOString().slice(0, 10);
}

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
}

export function addDays(date: string, days: number): string {
  const d = parse(date);
  d.setUTCDate(d.getUTCDate() + days);
  return format(d);
}

/**
 * Adds calendar months. A day the target month lacks rolls on to the 1st of the month after
 * (31 January + 1 month = 1 March; 29 February + 12 months = 1 March), so a period that starts on
 * such a day ends on the last day of the short month.
 */
export function addMonths(date: string, months: number): string {
  const [year, month, day] = date.split('-').map(Number);
  const index = month - 1 + months;
  const y = year + Math.floor(index / 12);
  const m = ((index % 12) + 12) % 12;
  const d = day <= daysInMonth(y, m) ? new Date(Date.UTC(y, m, day)) : new Date(Date.UTC(y, m + 1, 1));
  return format(d);
}


/** The rule of members without a category: yearly, rolling from the join date. */
export const DEFAULT_PERIOD_RULE: PeriodRule = { months: 12, anchor: null };

export interface Period {
  periodStart: string;
  periodEnd: string | null;
}

/** The anchor dates after `start`, `step` months apart (anchor days are 1-28, so every month has them). */
function* anchorsAfter(start: string, anchor: { month: number; day: number }, step: number): Generator<string> {
  const base = `${Number(start.slice(0, 4)) - 1}-${String(anchor.month).padStart(2, '0')}-${String(anchor.day).padStart(2, '0')}`;
  for (let k = 0; ; k++) {
    const date = addMonths(base, k * step);
    if (date > start) yield date;
  }
}

/**
 * The period that starts on `start`. Rolling: its length, ending the day before the same date
 * `months` later. Fixed: it ends the day before the last anchor date that falls within that
 * length, so a member joining mid-year runs to the next fixed date and then from fixed date to
 * fixed date. Lifetime: no end.
 */
export function periodFrom(rule: PeriodRule, start: string): Period {
  if (rule.months === null) return { periodStart: start, periodEnd: null };
  const rollingNext = addMonths(start, rule.months);
  if (!rule.anchor) return { periodStart: start, periodEnd: addDays(rollingNext, -1) };
  let last: string | undefined;
  for (const anchor of anchorsAfter(start, rule.anchor, Math.min(rule.months, 12))) {
    if (anchor > rollingNext) break;
    last = anchor;
  }
  // Anchors are at most one period apart, so one always falls in (start, rollingNext].
  return { periodStart: start, periodEnd: addDays(last!, -1) };
}

/**
 * A yearly period starting on `start` ends the day before the same date a year later: from
 * 29 February 2024 to 28 February 2025, from 1 March 2027 to 29 February 2028.
 */
export function yearlyPeriodFrom(start: string): { periodStart: string; periodEnd: string } {
  return { periodStart: start, periodEnd: addDays(addMonths(start, 12), -1) };
}

export function isCalendarDate(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && format(parse(value)) === value;
}
