import { describe, expect, it } from 'vitest';
import { periodFrom, type PeriodRule } from '../../../subgraphs/membership/member/member-period.js';

const rolling = (months: number | null): PeriodRule => ({ months, anchor: null });
const fixed = (months: number, month: number, day: number): PeriodRule => ({ months, anchor: { month, day } });

describe('periodFrom', () => {
  it.each([
    ['monthly from 15 Jan', rolling(1), '2026-01-15', '2026-02-14'],
    ['monthly from 31 Jan, a day February lacks', rolling(1), '2026-01-31', '2026-02-28'],
    ['quarterly', rolling(3), '2026-02-01', '2026-04-30'],
    ['half-yearly', rolling(6), '2026-08-31', '2027-02-28'],
    ['yearly from 29 Feb', rolling(12), '2024-02-29', '2025-02-28'],
    ['yearly after a period ending 28 Feb before a leap year (a renewal): to 29 Feb', rolling(12), '2027-03-01', '2028-02-29'],
    ['every 3 years', rolling(36), '2026-05-10', '2029-05-09'],
    ['lifetime', rolling(null), '2026-05-10', null],
    ['fixed 1 Jan, joining mid-year: to the next fixed date', fixed(12, 1, 1), '2026-11-20', '2026-12-31'],
    ['fixed 1 Jan, joining on it: a whole year', fixed(12, 1, 1), '2026-01-01', '2026-12-31'],
    ['fixed 1 Jul, joining in March', fixed(12, 7, 1), '2026-03-01', '2026-06-30'],
    ['fixed quarters from 1 Jan', fixed(3, 1, 1), '2026-02-10', '2026-03-31'],
    ['fixed months on the 15th', fixed(1, 1, 15), '2026-05-20', '2026-06-14'],
    ['fixed every 2 years on 1 Jul, joining in March', fixed(24, 7, 1), '2026-03-01', '2027-06-30'],
    ['fixed every 2 years, renewing on the fixed date', fixed(24, 7, 1), '2027-07-01', '2029-06-30'],
  ])('%s: %s → %s', (_label, rule, start, end) => {
    expect(periodFrom(rule, start)).toEqual({ periodStart: start, periodEnd: end });
  });
});
