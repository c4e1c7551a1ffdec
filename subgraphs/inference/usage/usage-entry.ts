import { UUID } from '../../shared/pagination.js';
import { uuidV7 } from '../../shared/uuid-v7.js';
import { UsageInterface } from './usage-interface.js';
import { USAGE_COLUMN_LENGTHS as LENGTHS } from './usage-limits.js';

/** What an interface reports of one call; `usage.record(entry)` takes it when the answer is done. */
export interface UsageEntry {
  interface: UsageInterface | `${UsageInterface}`;
  provider: string;
  model: string;
  /** The principal's account and key; both absent on keyless interfaces. */
  accountId?: string | null;
  keyId?: string | null;
  /** The edge's req.ip, stored as given; for keyless interfaces. */
  clientAddress?: string | null;
  promptTokens: number;
  completionTokens: number;
  /** Images returned by an image call; default 0. */
  images?: number;
  latencyMs: number;
  timeToFirstTokenMs?: number | null;
  streamed: boolean;
  /** The HTTP status answered. */
  status: number;
  errorCode?: string | null;
  /** When the call arrived; default: now minus latencyMs. */
  occurredAt?: Date;
}

/** A usage row as the batch insert reads it (jsonb_to_recordset), snake_case like the columns. */
export interface UsageRow {
  id: string;
  occurred_at: string;
  account_id: string | null;
  key_id: string | null;
  client_address: string | null;
  interface: string;
  provider: string;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  images: number;
  latency_ms: number;
  time_to_first_token_ms: number | null;
  streamed: boolean;
  status: number;
  error_code: string | null;
}

const INTERFACES = new Set<string>(Object.values(UsageInterface));
const MAX_INT = 2 ** 31 - 1;
const MAX_SMALLINT = 2 ** 15 - 1;

const count = (value: unknown, max = MAX_INT): number => {
  const n = Number(value);
  return Number.isFinite(n) ? Math.min(Math.max(Math.round(n), 0), max) : 0;
};

/** NUL and lone surrogates are refused by PostgreSQL text and jsonb; overlong text by the column. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const text = (value: unknown, length: number): string | null =>
  value === null || value === undefined ? null : String(value).replace(/\u0000/g, '').slice(0, length).replace(LONE_SURROGATE, '\uFFFD');

/**
 * The row an entry becomes, or the reason it cannot be stored. Every value a column could refuse is
 * clamped or cut here, because one refused row would fail the whole batch's insert.
 */
export function usageRowOf(entry: UsageEntry, now = Date.now()): UsageRow | { refused: string } {
  if (!entry || !INTERFACES.has(entry.interface)) return { refused: `unknown interface ${JSON.stringify(entry?.interface)}` };
  if (entry.accountId != null && !UUID.test(entry.accountId)) return { refused: 'accountId is not a uuid' };
  const latencyMs = count(entry.latencyMs);
  const given = entry.occurredAt instanceof Date ? entry.occurredAt.getTime() : Number.NaN;
  const occurredAt = new Date(Number.isFinite(given) ? given : now - latencyMs);
  return {
    id: uuidV7(occurredAt),
    occurred_at: occurredAt.toISOString(),
    account_id: entry.accountId ?? null,
    key_id: text(entry.keyId, LENGTHS.keyId),
    client_address: text(entry.clientAddress, LENGTHS.clientAddress),
    interface: entry.interface,
    provider: text(entry.provider, LENGTHS.provider) ?? '',
    model: text(entry.model, LENGTHS.model) ?? '',
    prompt_tokens: count(entry.promptTokens),
    completion_tokens: count(entry.completionTokens),
    images: count(entry.images ?? 0, MAX_SMALLINT),
    latency_ms: latencyMs,
    time_to_first_token_ms: entry.timeToFirstTokenMs == null || !Number.isFinite(Number(entry.timeToFirstTokenMs)) ? null : count(entry.timeToFirstTokenMs),
    streamed: entry.streamed === true,
    status: count(entry.status, MAX_SMALLINT),
    error_code: text(entry.errorCode, LENGTHS.errorCode),
  };
}
