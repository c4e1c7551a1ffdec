/** One cell: empty for null, ISO dates, JSON for objects and arrays, text as it is. */
function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * Rows as an aligned text table for people (`--format table`): one column per field, in the order
 * the fields first appear, a header of the field names, and nothing else, so `column`, `sort` and
 * `grep` work on it. No rows: the header of `fallbackColumns` alone, or nothing.
 */
export function formatTable(rows: readonly Record<string, unknown>[], fallbackColumns: readonly string[] = []): string {
  const columns = [...new Set([...rows.flatMap((row) => Object.keys(row)), ...(rows.length ? [] : fallbackColumns)])];
  if (!columns.length) return '';
  const lines = [columns, ...rows.map((row) => columns.map((column) => cell(row[column]).replace(/\s+/g, ' ')))];
  const widths = columns.map((_, index) => Math.max(...lines.map((line) => line[index].length)));
  return lines.map((line) => line.map((text, index) => (index === line.length - 1 ? text : text.padEnd(widths[index]))).join('  ').trimEnd()).join('\n') + '\n';
}
