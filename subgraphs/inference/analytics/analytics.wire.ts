import type { EntityManager } from '@mikro-orm/postgresql';
import { DomainError } from '../../../core/errors.js';
import type { Caller } from '../protocol/caller.js';
import type { InferenceRuntime } from '../inference-context.js';
import { WireError } from '../protocol/wire-error.js';
import { UsageInterface } from '../usage/usage-interface.js';
import { MAX_USAGE_PAGE_SIZE, USAGE_COLUMN_LENGTHS } from '../usage/usage-limits.js';
import type { UsageRecord } from '../usage/usage-record.entity.js';
import { AnalyticsBucket } from './analytics-bucket.js';
import type { AnalyticsScope } from './analytics-scope.js';
import { AnalyticsService, type HistoryFilter } from './analytics.service.js';

/**
 * GET /v1/analytics on the keyless gateway. The caller has no key, only the address the edge
 * signed, so:
 * - usage statistics and model performance cover every call on every interface: they are
 *   counts and timings per provider, model, interface and time, and name no account, key or
 *   address, which is what the spec's public "usage statistics, model performance" can show;
 * - call history lists the caller's own calls only (those recorded with its client address,
 *   i.e. its keyless gateway and proxy calls): a row names a time, a model and a status, which
 *   are another caller's business.
 */
export const GATEWAY_ANALYTICS_SCOPE = 'usage and performance: every call; history: the calls of your client address';

const SECTIONS = ['usage', 'performance', 'history'] as const;
type Section = (typeof SECTIONS)[number];
const PARAMS = new Set(['from', 'to', 'provider', 'model', 'interface', 'bucket', 'section', 'limit', 'after']);
/** The range when none is given: the last day. */
const DEFAULT_RANGE_MS = 86_400_000;

/**
 * The usage records' entity manager, for the HTTP routes (a fork of the subgraph's ORM per call).
 */
export function usageEntityManager(runtime: Pick<InferenceRuntime, 'orm'>): EntityManager {
  return runtime.orm.em.fork() as EntityManager;
}

const invalid = (param: string, message: string) => new WireError(422, 'invalid_value', message, param);

function single(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(name, `${name} must be given once, as one value`);
  return value;
}

function date(query: Record<string, unknown>, name: string): Date | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  // ISO 8601 only: Date.parse takes many forms a client would not mean ("1", "March 7").
  const parsed = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(parsed.getTime())) throw invalid(name, `${name} must be an ISO 8601 date or date-time, such as 2026-11-23 or 2026-11-23T10:00:00Z`);
  return parsed;
}

function text(query: Record<string, unknown>, name: string, max: number): string | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  if (!value.length || value.length > max) throw invalid(name, `${name} must be 1 to ${max} characters`);
  return value;
}

function oneOf<T extends string>(query: Record<string, unknown>, name: string, values: readonly T[]): T | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value)) throw invalid(name, `${name} must be one of ${values.join(', ')}`);
  return value as T;
}

/** The query parameters, checked; 422 invalid_value naming the first bad one, 400 for one the endpoint does not take. */
function paramsOf(query: Record<string, unknown>, now: Date) {
  for (const name of Object.keys(query)) {
    if (!PARAMS.has(name)) throw new WireError(400, 'unknown_parameter', `Unrecognized query parameter: ${name}`, name);
  }
  const to = date(query, 'to') ?? now;
  const from = date(query, 'from') ?? new Date(to.getTime() - DEFAULT_RANGE_MS);
  const section = single(query, 'section') ?? 'all';
  const sections = section === 'all' ? [...SECTIONS] : section.split(',');
  for (const s of sections) {
    if (!(SECTIONS as readonly string[]).includes(s)) throw invalid('section', `section must be all, or one or more of ${SECTIONS.join(', ')} separated by commas`);
  }
  const limitText = single(query, 'limit');
  let limit: number | undefined;
  if (limitText !== undefined) {
    limit = /^\d{1,4}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!(limit >= 1 && limit <= MAX_USAGE_PAGE_SIZE)) throw invalid('limit', `limit must be an integer from 1 to ${MAX_USAGE_PAGE_SIZE}`);
  }
  const filter: HistoryFilter = {
    from,
    to,
    provider: text(query, 'provider', USAGE_COLUMN_LENGTHS.provider) ?? null,
    model: text(query, 'model', USAGE_COLUMN_LENGTHS.model) ?? null,
    interface: oneOf(query, 'interface', Object.values(UsageInterface)) ?? null,
    limit: limit ?? null,
    after: text(query, 'after', 200) ?? null,
  };
  return { filter, bucket: oneOf(query, 'bucket', Object.values(AnalyticsBucket)), sections: new Set(sections as Section[]) };
}

const iso = (date: Date) => date.toISOString();

function historyRow(record: UsageRecord) {
  return {
    id: record.id,
    occurred_at: iso(record.occurredAt),
    interface: record.interface,
    provider: record.provider,
    model: record.model,
    prompt_tokens: record.promptTokens,
    completion_tokens: record.completionTokens,
    images: record.images,
    total_tokens: record.promptTokens + record.completionTokens,
    latency_ms: record.latencyMs,
    time_to_first_token_ms: record.timeToFirstTokenMs ?? null,
    streamed: record.streamed,
    status: record.status,
    error_code: record.errorCode ?? null,
  };
}

/** The gateway's analytics answer, snake_case; the sections asked for (all by default). */
export async function gatewayAnalytics(runtime: Pick<InferenceRuntime, 'orm'>, query: Record<string, unknown>, caller: Caller, now = new Date()) {
  const { filter, bucket, sections } = paramsOf(query, now);
  const service = new AnalyticsService(usageEntityManager(runtime));
  const all: AnalyticsScope = { kind: 'all' };
  const own: AnalyticsScope = { kind: 'address', address: caller.address ?? '' };
  try {
    const [usage, performance, history] = await Promise.all([
      sections.has('usage') ? service.usage(all, filter, bucket) : undefined,
      sections.has('performance') ? service.performance(all, filter) : undefined,
      sections.has('history') ? service.history(own, filter) : undefined,
    ]);
    return {
      object: 'analytics',
      from: iso(filter.from),
      to: iso(filter.to),
      filters: { provider: filter.provider, model: filter.model, interface: filter.interface },
      scope: GATEWAY_ANALYTICS_SCOPE,
      ...(usage && {
        usage: {
          bucket: usage.bucket,
          truncated: usage.truncated,
          data: usage.data.map((s) => ({
            bucket_start: iso(s.bucketStart),
            provider: s.provider,
            model: s.model,
            interface: s.interface,
            calls: s.calls,
            prompt_tokens: s.promptTokens,
            completion_tokens: s.completionTokens,
            images: s.images,
            total_tokens: s.totalTokens,
            errors: s.errors,
            error_rate: s.errorRate,
          })),
        },
      }),
      ...(performance && {
        performance: {
          data: performance.map((p) => ({
            provider: p.provider,
            model: p.model,
            calls: p.calls,
            succeeded: p.succeeded,
            server_errors: p.serverErrors,
            error_rate: p.errorRate,
            latency_p50_ms: p.latencyP50Ms,
            latency_p95_ms: p.latencyP95Ms,
            time_to_first_token_p50_ms: p.timeToFirstTokenP50Ms,
            completion_tokens_per_second: p.completionTokensPerSecond,
          })),
        },
      }),
      ...(history && { history: { data: history.data.map(historyRow), limit: history.limit, has_more: history.hasMore, next_cursor: history.nextCursor } }),
    };
  } catch (error) {
    // The services' BAD_USER_INPUT (range, bucket, cursor) in the gateway's table: 422 naming the parameter.
    if (error instanceof DomainError && error.extensions.code === 'BAD_USER_INPUT') throw invalid(String(error.extensions.param ?? 'query'), error.message);
    throw error;
  }
}
