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

/** Adds calendar years; 29 February falls back to 28 February in a common year. */
export function addYears(date: string, years: number): string {
  const d = parse(date);
  const month = d.getUTCMonth();
  d.setUTCFullYear(d.getUTCFullYear() + years);
  if (d.getUTCMonth() !== month) d.setUTCDate(0);
  return format(d);
}

/** A yearly period starting on `start` ends the day before the same date a year later. */
export function yearlyPeriodFrom(start: string): { periodStart: string; periodEnd: string } {
  return { periodStart: start, periodEnd: addDays(addYears(start, 1), -1) };
}

export function isCalendarDate(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) && format(parse(value)) === value;
}
