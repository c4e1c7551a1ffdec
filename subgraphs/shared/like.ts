/**
 * `text` as a literal inside a LIKE/ILIKE pattern: PostgreSQL's default escape character is the
 * backslash, so it and the two wildcards are escaped, and a search for "50%_off" finds only that.
 */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
