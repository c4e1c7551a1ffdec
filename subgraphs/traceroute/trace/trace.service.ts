import type { EntityManager } from '@mikro-orm/postgresql';
import { InvalidCursorError, UUID, type Page } from '../../shared/pagination.js';
import type { TraceDirection } from './trace-direction.js';
import type { TraceStatus } from './trace-status.js';
import { Trace } from './trace.entity.js';
import { DEFAULT_TRACE_PAGE_SIZE, type TracesArgs } from './trace.inputs.js';

/** What a measurement source supplies for one trace; the platform assigns the rest. */
export type TraceRecord = Omit<Trace, 'id' | 'createdAt' | 'targetDomain' | 'targetCity'> &
  Partial<Pick<Trace, 'id' | 'targetDomain' | 'targetCity'>>;

interface TraceCursor {
  measuredAt: Date;
  id: string;
}

function encodeCursor(trace: Trace): string {
  return Buffer.from(JSON.stringify([trace.measuredAt.toISOString(), trace.id])).toString('base64url');
}

function decodeCursor(cursor: string): TraceCursor {
  try {
    const [measuredAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    const date = new Date(measuredAt);
    if (Number.isNaN(date.getTime()) || typeof id !== 'string' || !UUID.test(id)) throw new Error('bad cursor');
    return { measuredAt: date, id };
  } catch {
    throw new InvalidCursorError();
  }
}

/** Traceroute measurements. They are public research data, so no query is scoped to an account. */
export class TraceService {
  constructor(private readonly em: EntityManager) {}

  /**
   * Keyset pagination in measurement order rather than storage order (the shared paginate()
   * follows createdAt): traces are often imported long after they were measured.
   */
  async list(args: TracesArgs): Promise<Page<Trace>> {
    const limit = args.limit ?? DEFAULT_TRACE_PAGE_SIZE;
    const where: { direction?: TraceDirection; status?: TraceStatus } = {};
    if (args.direction) where.direction = args.direction;
    if (args.status) where.status = args.status;
    const query = this.em
      .createQueryBuilder(Trace, 't')
      .where(where)
      .orderBy({ measuredAt: 'desc', id: 'desc' })
      .limit(limit + 1);
    if (args.after) {
      const cursor = decodeCursor(args.after);
      // A row comparison, unlike the equivalent OR, is a range condition on the (measured_at
      // desc, id desc) index, so a deep page costs no more than the first.
      query.andWhere('(t.measured_at, t.id) < (?, ?)', [cursor.measuredAt, cursor.id]);
    }
    const rows = await query.getResultList();
    const data = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    return { data, hasMore, nextCursor: hasMore ? encodeCursor(data[data.length - 1]) : null };
  }

  /** One trace, or null when the id is unknown or not a uuid. */
  async find(id: string): Promise<Trace | null> {
    if (!UUID.test(id)) return null;
    return this.em.findOne(Trace, { id });
  }

  /** Many traces in one statement, in the order of `ids` (null where unknown). */
  async findMany(ids: readonly string[]): Promise<(Trace | null)[]> {
    const valid = ids.filter((id) => UUID.test(id));
    const rows = valid.length ? await this.em.find(Trace, { id: { $in: valid } }) : [];
    const byId = new Map(rows.map((t) => [t.id, t]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** Stores measurements as given; the import from measurement sources builds on this. */
  async record(traces: readonly TraceRecord[]): Promise<Trace[]> {
    const rows = traces.map((trace) => this.em.create(Trace, { targetDomain: null, targetCity: null, ...trace }));
    await this.em.flush();
    return rows;
  }
}
