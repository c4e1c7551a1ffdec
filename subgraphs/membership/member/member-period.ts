/** Calendar arithmetic on YYYY-MM-DD strings, in UTC so no time zone shifts a day. */
function parse(date: string): Date {
  return new Date(`${date}T00:00:00.000Z`);
}

function format(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  const d = parse(date);
  d.setUTCDate(d.getUTCDate() + days);
  return format(d);
}

/** Adds calendar years; 29 February rolls on to 1 March in a common year. */
function addYears(date: string, years: number): string {
  const d = parse(date);
  d.setUTCFullYear(d.getUTCFullYear() + years);
  return format(d);
}

/**
 * A yearly period starting on `start` ends the day before the same date a year later: from
 * 29 February 2024 to 28 February 2025, from 1 March 2027 to 29 February 2028.
 */
export function yearlyPeriodFrom(start: string): { periodStart: string; periodEnd: string } {
  return { periodStart: start, periodEnd: addDays(addYears(start, 1), -1) };
}

/** The end of the yearly period that follows one ending on `periodEnd`. */
export function nextYearlyPeriodEnd(periodEnd: string): string {
  return yearlyPeriodFrom(addDays(periodEnd, 1)).periodEnd;
}

export function isCalendarDate(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && format(parse(value)) === value;
}
