import { DomainError } from '../../../core/errors.js';
import { MAX_HOURS } from './trace-limits.js';
import type { TraceFilterArgs } from './trace.inputs.js';
import { escapeLike } from '../../shared/like.js';
import { canonicalIp } from './canonical-ip.js';

/** A WHERE clause with `?` placeholders and its values. */
export interface SqlFilter {
  where: string;
  params: unknown[];
  since: Date;
  until: Date;
}

const EARLIEST = new Date('1970-01-01T00:00:00Z');
const LATEST = new Date('9999-12-31T23:59:59.999Z');


/**
 * The measurement-time window [since, until): from `since` when given (then `hours` does not
 * apply and the window may be of any length), else `hours` (default `defaultHours`, at most
 * MAX_HOURS) before `until` (default now). The window always bounds the partitions a query reads.
 */
export function windowOf(args: { since?: Date | null; until?: Date | null; hours?: number | null }, defaultHours: number, now = new Date()) {
  for (const name of ['since', 'until'] as const) {
    const at = args[name];
    // Measurements carry Unix times; PostgreSQL refuses some dates JavaScript accepts (year 0).
    if (at && (at.getTime() < EARLIEST.getTime() || at.getTime() > LATEST.getTime())) {
      throw new DomainError('BAD_USER_INPUT', `${name} must be from ${EARLIEST.toISOString()} to ${LATEST.toISOString()}`, { param: name, reason: 'invalid_parameter' });
    }
  }
  const until = args.until ?? now;
  const since = args.since ?? new Date(until.getTime() - (args.hours ?? defaultHours) * 3_600_000);
  if (since.getTime() >= until.getTime()) {
    throw new DomainError('BAD_USER_INPUT', 'since must be before until', { param: 'since', reason: 'invalid_parameter' });
  }
  if (args.hours != null && (args.hours < 1 || args.hours > MAX_HOURS)) {
    throw new DomainError('BAD_USER_INPUT', `hours must be from 1 to ${MAX_HOURS}`, { param: 'hours', reason: 'invalid_parameter' });
  }
  return { since, until };
}

/** The spec's filters as SQL on the trace row's own columns (each has its index). */
export function traceFilter(args: TraceFilterArgs & { hours?: number | null }, defaultHours: number, alias = 't'): SqlFilter {
  return traceFilterWithin(args, windowOf(args, defaultHours), alias);
}

/** traceFilter for a window already worked out (windowOf), so its checks run once. */
export function traceFilterWithin(args: TraceFilterArgs, window: { since: Date; until: Date }, alias = 't'): SqlFilter {
  const { since, until } = window;
  const conditions = [`${alias}.measured_at >= ?`, `${alias}.measured_at < ?`];
  const params: unknown[] = [since, until];
  const add = (sql: string, value: unknown) => {
    conditions.push(sql);
    params.push(value);
  };
  if (args.direction) add(`${alias}.direction = ?`, args.direction);
  if (args.status) add(`${alias}.status = ?`, args.status);
  if (args.probeCountry) add(`${alias}.probe_country = ?`, args.probeCountry.toUpperCase());
  // Cities ignore case as countries do; the indexes are on lower(city).
  if (args.probeCity) add(`lower(${alias}.probe_city) = lower(?)`, args.probeCity);
  if (args.probeAsn != null) add(`${alias}.probe_asn = ?`, args.probeAsn);
  if (args.targetIp) add(`${alias}.target_ip = ?`, canonicalIp(args.targetIp));
  if (args.targetCity) add(`lower(${alias}.target_city) = lower(?)`, args.targetCity);
  if (args.targetDomain) add(`${alias}.target_domain ilike ?`, `%${escapeLike(args.targetDomain.toLowerCase())}%`);
  if (args.minAnomaly != null) add(`${alias}.anomaly_score >= ?`, args.minAnomaly);
  if (args.msmId != null) add(`${alias}.msm_id = ?`, args.msmId);
  if (args.probeId != null) add(`${alias}.probe_id = ?`, args.probeId);
  if (args.af != null) add(`${alias}.af = ?`, args.af);
  if (args.protocol) add(`${alias}.protocol = ?`, args.protocol);
  if (args.targetAsn != null) add(`${alias}.target_asn = ?`, args.targetAsn);
  // Containment (@>) is what the GIN indexes on the hop arrays answer; inet compares any spelling.
  if (args.hopIp) add(`${alias}.hop_ips @> array[?]::inet[]`, canonicalIp(args.hopIp));
  if (args.hopAsn != null) add(`${alias}.hop_asns @> array[?]::int[]`, args.hopAsn);
  return { where: conditions.join(' and '), params, since, until };
}

/** `?` placeholders as pg's `$1, $2, ...` (the filter SQL has no other question marks). */
export function numbered(sql: string, offset = 0): string {
  let n = offset;
  return sql.replace(/\?/g, () => `$${++n}`);
}
