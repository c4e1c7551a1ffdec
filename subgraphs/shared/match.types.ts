import { cursorParts, encodeCursor } from './cursor.js';
import { DEFAULT_PAGE_SIZE, InvalidCursorError } from './pagination.js';
import { DomainError } from '../../core/errors.js';
import { Directive, Field, Float, Int, ObjectType } from './type-graphql.js';

/** The points each part of a job match gave; both the marketplace and membership answer it. */
@ObjectType({ description: 'Points out of 100 a match got for skills (0-60), text relevance (0-30) and location (0-10).' })
@Directive('@shareable')
export class MatchComponentsType {
  @Field(() => Float)
  skills!: number;

  @Field(() => Float)
  text!: number;

  @Field(() => Float)
  location!: number;
}

/** A job match's score and why: the fields every match result carries. */
@ObjectType({ description: 'An explained match score.' })
@Directive('@shareable')
export class MatchExplanationType {
  @Field(() => Int, { description: '0-100.' })
  score!: number;

  @Field(() => MatchComponentsType)
  components!: MatchComponentsType;

  @Field(() => [String], { description: "The posting's skills the candidate has." })
  matchedSkills!: string[];

  @Field(() => [String], { description: "The posting's skills the candidate lacks." })
  missingSkills!: string[];

  @Field(() => [String], { description: 'The score in words.' })
  reasons!: string[];
}

/** An offset cursor for ranked lists (a rank has no stable key to seek from). */
export function encodeRankCursor(offset: number): string {
  return encodeCursor(['rank', offset]);
}

/** The offset of a rank cursor; null when it is not one. */
export function decodeRankCursor(cursor: string): number | null {
  const [kind, offset, extra] = cursorParts(cursor) ?? [];
  return kind === 'rank' && extra === undefined && Number.isInteger(offset) && (offset as number) >= 0 && (offset as number) <= 100_000 ? (offset as number) : null;
}

/** The window a ranked page reads: its size and offset, from `limit` and a rank cursor (400 invalid_cursor when it is not one). */
export function rankWindow(args: { limit?: number | null; after?: string | null }): { limit: number; offset: number } {
  const offset = args.after ? decodeRankCursor(args.after) : 0;
  if (offset === null) throw new InvalidCursorError();
  return { limit: args.limit ?? DEFAULT_PAGE_SIZE, offset };
}

/** A ranked page from the `limit + 1` rows read at `offset`: its data, whether more follow, and the next cursor. */
export function rankedPage<T>(data: T[], rowsRead: number, window: { limit: number; offset: number }): { data: T[]; hasMore: boolean; nextCursor: string | null } {
  const hasMore = rowsRead > window.limit;
  return { data, hasMore, nextCursor: hasMore ? encodeRankCursor(window.offset + window.limit) : null };
}

/**
 * The page of a ranking, carried in the key of MatchingMember and MatchingJob (`id page`): the
 * ranked list is an entity field resolved in the other subgraph, and a key is all that travels
 * with the reference, so the page travels in it (no nested field arguments on the REST path).
 */
export function encodeMatchPage(page: { limit?: number | null; after?: string | null }): string {
  return JSON.stringify({ limit: page.limit ?? null, after: page.after ?? null });
}

/** The page of a `page` key; a key this API did not make is a bad cursor. */
export function decodeMatchPage(page: string | null | undefined): { limit: number | null; after: string | null } {
  try {
    const parsed = JSON.parse(page ?? '{}') as { limit?: unknown; after?: unknown };
    const limit = parsed.limit ?? null;
    const after = parsed.after ?? null;
    if ((limit !== null && (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > 100)) || (after !== null && typeof after !== 'string')) throw new Error('bad page');
    return { limit: limit as number | null, after: after as string | null };
  } catch {
    throw new DomainError('BAD_USER_INPUT', 'The page of this ranking is not one this API issued', { param: 'after', reason: 'invalid_cursor' });
  }
}
