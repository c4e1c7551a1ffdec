// The usage API's limits, in a module that imports nothing, so a REST view can state the same numbers.

export const DEFAULT_USAGE_PAGE_SIZE = 50;
export const MAX_USAGE_PAGE_SIZE = 200;
/** The widest window a list or summary reads: it bounds the monthly partitions one query touches. */
export const MAX_USAGE_WINDOW_DAYS = 90;
/**
 * The fewest whole months before the current one a retention may keep: the usage API reads windows
 * of up to MAX_USAGE_WINDOW_DAYS back from now, and that many days reach back at most this many
 * months (counting each as the shortest, 28 days).
 */
export const MIN_USAGE_RETENTION_MONTHS = Math.ceil(MAX_USAGE_WINDOW_DAYS / 28);
/** Thirteen months: a year back, and the month a year ago whole, for year-on-year figures. */
export const DEFAULT_USAGE_RETENTION_MONTHS = 13;

/** Column widths; the recorder truncates to them, so one odd value cannot fail a whole batch. */
export const USAGE_COLUMN_LENGTHS = {
  keyId: 40,
  clientAddress: 45,
  provider: 64,
  model: 200,
  errorCode: 64,
} as const;
