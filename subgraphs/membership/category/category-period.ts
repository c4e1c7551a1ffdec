import { registerEnumType } from '../../shared/type-graphql.js';

/** How long one membership period of a category lasts. */
export enum CategoryPeriod {
  MONTHLY = 'monthly',
  QUARTERLY = 'quarterly',
  HALF_YEARLY = 'half_yearly',
  YEARLY = 'yearly',
  EVERY_N_YEARS = 'every_n_years',
  LIFETIME = 'lifetime',
}

registerEnumType(CategoryPeriod, {
  name: 'CategoryPeriod',
  valuesConfig: {
    EVERY_N_YEARS: { description: 'Every `periodYears` years.' },
    LIFETIME: { description: 'One payment, no end, no renewal.' },
  },
});

/** Where periods are counted from. */
export enum RenewalBasis {
  ROLLING = 'rolling',
  FIXED = 'fixed',
}

registerEnumType(RenewalBasis, {
  name: 'RenewalBasis',
  valuesConfig: {
    ROLLING: { description: "Periods run back to back from the member's first period start (the join date)." },
    FIXED: { description: 'Periods end the day before a fixed date of the year (fixedMonth, fixedDay).' },
  },
});

/** How a category's periods run: their length in months (null: lifetime) and an optional yearly anchor. */
export interface PeriodRule {
  months: number | null;
  /** Fixed renewal basis: periods end the day before this month/day (day 1-28) or its steps through the year. */
  anchor: { month: number; day: number } | null;
}

/** Months per period; null for lifetime. */
export function monthsOf(period: CategoryPeriod, periodYears: number | null): number | null {
  switch (period) {
    case CategoryPeriod.MONTHLY:
      return 1;
    case CategoryPeriod.QUARTERLY:
      return 3;
    case CategoryPeriod.HALF_YEARLY:
      return 6;
    case CategoryPeriod.YEARLY:
      return 12;
    case CategoryPeriod.EVERY_N_YEARS:
      return 12 * (periodYears ?? 1);
    case CategoryPeriod.LIFETIME:
      return null;
  }
}

/** Days before the period end from which an active member may renew, unless its category says otherwise (members without a category too). */
export const DEFAULT_RENEWAL_WINDOW_DAYS = 30;
