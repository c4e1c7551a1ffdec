import { decodeTimeCursor, encodeTimeCursor } from '../../shared/cursor.js';
import { InvalidCursorError } from '../../shared/pagination.js';
import { UsageRecord } from './usage-record.entity.js';

/** A row as the driver returns it. */
export type UsageRow = Record<string, unknown>;

/** The columns of a usage record, as every list of records (usage, analytics history) selects them. */
export const USAGE_COLUMNS = `u.id, u.occurred_at, u.account_id, u.key_id, u.client_address, u.interface, u.provider, u.model, u.prompt_tokens,
  u.completion_tokens, u.images, u.latency_ms, u.time_to_first_token_ms, u.streamed, u.status, u.error_code`;

export const numberOrNull = (value: unknown) => (value === null || value === undefined ? null : Number(value));

export function usageRecordFromRow(row: UsageRow): UsageRecord {
  return Object.assign(new UsageRecord(), {
    id: row.id,
    occurredAt: new Date(row.occurred_at as string),
    accountId: row.account_id ?? null,
    keyId: row.key_id ?? null,
    clientAddress: row.client_address ?? null,
    interface: row.interface,
    provider: row.provider,
    model: row.model,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    images: row.images ?? 0,
    latencyMs: row.latency_ms,
    timeToFirstTokenMs: row.time_to_first_token_ms ?? null,
    streamed: row.streamed,
    status: row.status,
    errorCode: row.error_code ?? null,
  });
}

/** The cursor of every usage list: [occurred_at, id], so a page of one continues in another. */
export function encodeUsageCursor(record: Pick<UsageRecord, 'occurredAt' | 'id'>): string {
  return encodeTimeCursor(record.occurredAt, record.id);
}

/** The position a cursor names; InvalidCursorError when it is not one this API issued. */
export function decodeUsageCursor(cursor: string): { occurredAt: Date; id: string } {
  const position = decodeTimeCursor(cursor);
  if (!position) throw new InvalidCursorError();
  return { occurredAt: position.at, id: position.id };
}
