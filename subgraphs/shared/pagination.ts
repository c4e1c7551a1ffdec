import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntityName, FilterQuery } from '@mikro-orm/core';
import { decodeTimeCursor, encodeTimeCursor } from './cursor.js';
import { DomainError } from '../../core/errors.js';

export { UUID } from './uuid-v7.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export class InvalidCursorError extends DomainError {
  constructor() {
    super('BAD_USER_INPUT', 'The cursor is not one this API issued', { param: 'after', reason: 'invalid_cursor' });
  }
}

interface Keyed {
  id: string;
  createdAt: Date;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor: string | null;
}

function decodeCursor(cursor: string): Keyed {
  const position = decodeTimeCursor(cursor);
  if (!position) throw new InvalidCursorError();
  return { createdAt: position.at, id: position.id };
}

/**
 * Keyset pagination, newest first with the id as tie-breaker: stable under inserts, and each
 * page is one index range scan whatever its depth.
 */
export async function paginate<T extends Keyed>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>[],
  options: { limit?: number | null; after?: string | null },
): Promise<Page<T>> {
  const limit = options.limit ?? DEFAULT_PAGE_SIZE;
  const conditions = [...where];
  if (options.after) {
    const cursor = decodeCursor(options.after);
    conditions.push({
      $or: [{ createdAt: { $lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { $lt: cursor.id } }],
    } as FilterQuery<T>);
  }
  const rows = (await em.find(entity, { $and: conditions } as FilterQuery<T>, {
    orderBy: { createdAt: 'desc', id: 'desc' } as never,
    limit: limit + 1,
  })) as T[];
  const data = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { data, hasMore, nextCursor: hasMore ? encodeTimeCursor(data[data.length - 1].createdAt, data[data.length - 1].id) : null };
}
