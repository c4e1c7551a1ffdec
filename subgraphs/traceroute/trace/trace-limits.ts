// The traceroute API's limits, in a module that imports nothing: the subgraph checks them and the
// REST bridge's OpenAPI document states them, from the same numbers.

export const DEFAULT_TRACE_PAGE_SIZE = 50;
export const MAX_TRACE_PAGE_SIZE = 200;
export const DEFAULT_SEARCH_HOURS = 168;
export const DEFAULT_STATS_HOURS = 24;
export const MAX_HOURS = 720;
/** page × limit past this is refused: deep offsets cost a scan of every skipped row; the cursor does not. */
export const MAX_OFFSET = 10_000;
/** The largest ASN a filter takes: the column is a PostgreSQL integer, as GraphQL's Int is 32-bit. */
export const MAX_ASN = 2 ** 31 - 1;

/** GET /traces/export: the last DEFAULT_EXPORT_HOURS hours and DEFAULT_EXPORT_LIMIT traces unless asked otherwise. */
export const DEFAULT_EXPORT_HOURS = 24;
export const DEFAULT_EXPORT_LIMIT = 1000;
export const MAX_EXPORT_LIMIT = 10_000;
