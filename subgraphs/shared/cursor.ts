import { UUID } from './uuid-v7.js';

// One cursor codec for every list: a cursor is a base64url JSON array of the position's values.
// Opaque to clients; read back field by field, so a cursor from another list, a forged one or junk
// is refused by the list that reads it (each list raises its own interface's error).

/** The cursor naming `parts`. */
export function encodeCursor(parts: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

/** The values of a cursor this codec wrote; undefined for anything else. */
export function cursorParts(cursor: string): unknown[] | undefined {
  try {
    const parts: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return Array.isArray(parts) ? parts : undefined;
  } catch {
    return undefined;
  }
}

/** The cursor of a list in (time, id) order: most lists page newest first by such a pair. */
export function encodeTimeCursor(at: Date, id: string): string {
  return encodeCursor([at.toISOString(), id]);
}

/** The (time, id) a time cursor names; undefined when it is not one. */
export function decodeTimeCursor(cursor: string): { at: Date; id: string } | undefined {
  const parts = cursorParts(cursor);
  if (parts?.length !== 2) return undefined;
  const [at, id] = parts;
  if (typeof at !== 'string' || typeof id !== 'string' || !UUID.test(id)) return undefined;
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? undefined : { at: date, id };
}
