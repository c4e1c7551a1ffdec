// The usage API's limits, in a module that imports nothing, so a REST view can state the same numbers.

export const DEFAULT_USAGE_PAGE_SIZE = 50;
export const MAX_USAGE_PAGE_SIZE = 200;
/** The widest window a list or summary reads: it bounds the monthly partitions one query touches. */
export const MAX_USAGE_WINDOW_DAYS = 90;

/** Column widths; the recorder truncates to them, so one odd value cannot fail a whole batch. */
export const USAGE_COLUMN_LENGTHS = {
  keyId: 40,
  clientAddress: 45,
  provider: 64,
  model: 200,
  errorCode: 64,
} as const;
