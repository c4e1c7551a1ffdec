import type { EntityManager } from '@mikro-orm/postgresql';
import { decodeUsageCursor, encodeUsageCursor, numberOrNull, USAGE_COLUMNS, usageRecordFromRow } from './usage-row.js';
import { DomainError } from '../../../core/errors.js';
import { InvalidCursorError, UUID } from '../../shared/pagination.js';
import type { Principal } from '../../../core/principal.js';
import { timeOfUuidV7 } from '../../shared/uuid-v7.js';
import { UsageGroupBy } from './usage-group-by.js';
import type { UsageGroup } from './usage-group.js';
import type { UsageArgs, UsageSummaryArgs, UsageWindowArgs } from './usage.inputs.js';
import { DEFAULT_USAGE_PAGE_SIZE, MAX_USAGE_WINDOW_DAYS } from './usage-limits.js';
import { UsageRecord } from './usage-record.entity.js';
import type { UsageRecordPage } from './usage-record-page.js';
import type { UsageSummary } from './usage-summary.js';

type Row = Record<string, unknown>;

/** The most groups a summary returns (grouping by key over a busy window has no natural bound). */
export const MAX_USAGE_GROUPS = 1000;

/** Each grouping's SELECT expressions; KEY shows keyless calls by client address. */
const GROUP_COLUMNS: Record<UsageGroupBy, string[]> = {
  [UsageGroupBy.PROVIDER]: ['u.provider as provider'],
  [UsageGroupBy.MODEL]: ['u.model as model'],
  [UsageGroupBy.INTERFACE]: ['u.interface as interface'],
  [UsageGroupBy.KEY]: ['u.key_id as key_id', 'case when u.key_id is null then u.client_address end as client_address'],
  [UsageGroupBy.STATUS]: ['u.status as status'],
};




/**
 * Usage records and their figures. A text or image key sees its own account's calls; an admin
 * key sees every call, keyless ones included (they belong to no account).
 */
export class UsageService {
  constructor(private readonly em: EntityManager) {}

  private execute(sql: string, params: unknown[]): Promise<Row[]> {
    return this.em.getConnection().execute<Row[]>(sql, params, 'all');
  }

  /** The window and scope conditions every query starts from; the window bounds the partitions read. */
  private where(principal: Principal, window: UsageWindowArgs): { sql: string[]; params: unknown[] } {
    const { from, to } = checkedWindow(window);
    const sql = ['u.occurred_at >= ?', 'u.occurred_at < ?'];
    const params: unknown[] = [from, to];
    if (principal.kind !== 'admin') {
      // Keyless records have no account, so no account scope ever matches them.
      if (!UUID.test(principal.accountId)) sql.push('false');
      else {
        sql.push('u.account_id = ?');
        params.push(principal.accountId);
      }
    }
    return { sql, params };
  }

  /** Records in the window, newest first, keyset-paged by (occurred_at, id). */
  async list(principal: Principal, args: UsageArgs): Promise<UsageRecordPage> {
    const limit = args.limit ?? DEFAULT_USAGE_PAGE_SIZE;
    const { sql, params } = this.where(principal, args);
    for (const [column, value] of [['interface', args.interface], ['provider', args.provider], ['model', args.model]] as const) {
      if (value == null) continue;
      sql.push(`u.${column} = ?`);
      params.push(value);
    }
    if (args.after) {
      const cursor = decodeUsageCursor(args.after);
      // A row comparison is a range condition on the (occurred_at desc, id desc) order of every index.
      sql.push('(u.occurred_at, u.id) < (?, ?)');
      params.push(cursor.occurredAt, cursor.id);
    }
    const rows = await this.execute(
      `select ${USAGE_COLUMNS} from "inference"."usage_record" u where ${sql.join(' and ')} order by u.occurred_at desc, u.id desc limit ?`,
      [...params, limit + 1],
    );
    const data = rows.slice(0, limit).map(usageRecordFromRow);
    const hasMore = rows.length > limit;
    return { data, limit, hasMore, nextCursor: hasMore ? encodeUsageCursor(data[data.length - 1]) : null };
  }

  /** Counts, token sums and latency percentiles (percentile_cont, interpolated) per group over the window. */
  async summary(principal: Principal, args: UsageSummaryArgs): Promise<UsageSummary> {
    const { sql, params } = this.where(principal, args);
    const groupBy = [...new Set(args.groupBy)];
    const keys = groupBy.flatMap((group) => GROUP_COLUMNS[group]);
    const positions = keys.map((_, i) => i + 1);
    const rows = await this.execute(
      `select ${keys.map((key) => `${key}, `).join('')}
         count(*) as requests,
         count(*) filter (where u.status >= 400) as failed,
         coalesce(sum(u.prompt_tokens), 0)::bigint as prompt_tokens,
         coalesce(sum(u.completion_tokens), 0)::bigint as completion_tokens,
         percentile_cont(0.5) within group (order by u.latency_ms) as latency_p50,
         percentile_cont(0.95) within group (order by u.latency_ms) as latency_p95,
         percentile_cont(0.5) within group (order by u.time_to_first_token_ms) as ttft_p50
       from "inference"."usage_record" u where ${sql.join(' and ')}
       ${positions.length ? `group by ${positions.join(', ')} order by requests desc, ${positions.join(', ')}` : ''}
       limit ?`,
      [...params, MAX_USAGE_GROUPS + 1],
    );
    const groups = rows.slice(0, MAX_USAGE_GROUPS).map(
      (row): UsageGroup => ({
        provider: (row.provider as string) ?? null,
        model: (row.model as string) ?? null,
        interface: (row.interface as UsageGroup['interface']) ?? null,
        keyId: (row.key_id as string) ?? null,
        clientAddress: (row.client_address as string) ?? null,
        status: numberOrNull(row.status),
        requests: Number(row.requests),
        failed: Number(row.failed),
        promptTokens: Number(row.prompt_tokens),
        completionTokens: Number(row.completion_tokens),
        totalTokens: Number(row.prompt_tokens) + Number(row.completion_tokens),
        latencyP50Ms: numberOrNull(row.latency_p50),
        latencyP95Ms: numberOrNull(row.latency_p95),
        timeToFirstTokenP50Ms: numberOrNull(row.ttft_p50),
      }),
    );
    return { from: args.from, to: args.to, groupBy, groups, truncated: rows.length > MAX_USAGE_GROUPS };
  }

  /** Many records in one statement, in the order of `ids` (null where unknown or out of scope); a UUIDv7 names its partition. */
  async findMany(principal: Principal, ids: readonly string[]): Promise<(UsageRecord | null)[]> {
    const keys = [...new Set(ids.filter((id) => UUID.test(id)).map((id) => id.toLowerCase()))]
      .map((id) => ({ id, at: timeOfUuidV7(id) }))
      .filter((key) => key.at && key.at.getUTCFullYear() <= 9999)
      .map((key) => ({ id: key.id, at: key.at!.toISOString() }));
    if (!keys.length) return ids.map(() => null);
    const scoped = principal.kind === 'admin' ? '' : UUID.test(principal.accountId) ? ' and u.account_id = ?' : ' and false';
    const rows = await this.execute(
      `select ${USAGE_COLUMNS} from jsonb_to_recordset(?::jsonb) as k(id uuid, at timestamptz)
       join "inference"."usage_record" u on u.id = k.id and u.occurred_at = k.at${scoped}`,
      [JSON.stringify(keys), ...(scoped.includes('?') ? [principal.accountId] : [])],
    );
    const byId = new Map(rows.map((row) => [String(row.id), usageRecordFromRow(row)]));
    return ids.map((id) => byId.get(id.toLowerCase()) ?? null);
  }
}

/** from before to, at most MAX_USAGE_WINDOW_DAYS apart; BAD_USER_INPUT naming the parameter otherwise. */
export function checkedWindow(window: UsageWindowArgs): { from: Date; to: Date } {
  const { from, to } = window;
  if (from.getTime() >= to.getTime()) {
    throw new DomainError('BAD_USER_INPUT', 'to must be after from', { param: 'to', reason: 'invalid_parameter' });
  }
  if (to.getTime() - from.getTime() > MAX_USAGE_WINDOW_DAYS * 86_400_000) {
    throw new DomainError('BAD_USER_INPUT', `from must be at most ${MAX_USAGE_WINDOW_DAYS} days before to`, {
      param: 'from',
      reason: 'invalid_parameter',
    });
  }
  return { from, to };
}
