import { QueryOrder, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { cursorParts, encodeCursor } from '../../shared/cursor.js';
import { DEFAULT_PAGE_SIZE, InvalidCursorError, UUID, type Page } from '../../shared/pagination.js';
import { findForReading } from '../../shared/read-only-rows.js';
import { Member } from './member.entity.js';
import { MemberSort, SORT_KEYS } from './member-sort.js';

type SortValue = string | null;

function valueOf(member: Member, field: (typeof SORT_KEYS)[MemberSort]['field']): SortValue {
  const value = member[field];
  return value instanceof Date ? value.toISOString() : (value ?? null);
}

function encode(sort: MemberSort, member: Member): string {
  return encodeCursor([sort, valueOf(member, SORT_KEYS[sort].field), member.id]);
}

function decode(cursor: string, sort: MemberSort): { value: SortValue; id: string } {
  const [cursorSort, value, id, extra] = cursorParts(cursor) ?? [];
  const field = SORT_KEYS[sort].field;
  const valid =
    cursorSort === sort &&
    extra === undefined &&
    typeof id === 'string' &&
    UUID.test(id) &&
    (value === null ? field === 'periodEnd' : typeof value === 'string' && (field !== 'createdAt' || !Number.isNaN(Date.parse(value))));
  if (!valid) throw new InvalidCursorError();
  return { value: value as SortValue, id };
}

/**
 * Rows after the cursor in the order (field, id), where a missing period end sorts as the
 * greatest value (PostgreSQL's own rule: nulls last ascending, first descending).
 */
function after(field: string, direction: 'asc' | 'desc', cursor: { value: SortValue; id: string }): FilterQuery<Member> {
  const cmp = direction === 'asc' ? '$gt' : '$lt';
  const value = field === 'createdAt' && cursor.value !== null ? new Date(cursor.value) : cursor.value;
  if (value === null) {
    return direction === 'asc'
      ? ({ [field]: null, id: { $gt: cursor.id } } as FilterQuery<Member>)
      : ({ $or: [{ [field]: null, id: { $lt: cursor.id } }, { [field]: { $ne: null } }] } as FilterQuery<Member>);
  }
  const or: object[] = [{ [field]: { [cmp]: value } }, { [field]: value, id: { [cmp]: cursor.id } }];
  if (field === 'periodEnd' && direction === 'asc') or.push({ [field]: null });
  return { $or: or } as FilterQuery<Member>;
}

/** One page of members in `sort` order, keyset-paginated on (sort column, id). */
export async function pageMembers(
  em: EntityManager,
  where: FilterQuery<Member>[],
  sort: MemberSort,
  options: { limit?: number | null; after?: string | null },
): Promise<Page<Member>> {
  const { field, direction } = SORT_KEYS[sort];
  const limit = options.limit ?? DEFAULT_PAGE_SIZE;
  const conditions = [...where];
  if (options.after) conditions.push(after(field, direction, decode(options.after, sort)));
  const order = field === 'periodEnd' ? (direction === 'asc' ? QueryOrder.ASC_NULLS_LAST : QueryOrder.DESC_NULLS_FIRST) : direction;
  // A page is only read: its rows skip the unit of work (findForReading).
  const rows = await findForReading(em, Member, { $and: conditions } as FilterQuery<Member>, {
    orderBy: [{ [field]: order }, { id: direction }] as never,
    limit: limit + 1,
  });
  const data = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { data, hasMore, nextCursor: hasMore ? encode(sort, data[data.length - 1]) : null };
}
