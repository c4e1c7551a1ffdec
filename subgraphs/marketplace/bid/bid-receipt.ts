import { createHash } from 'node:crypto';
import type { Bid } from './bid.entity.js';

/** JSON with object keys sorted at every depth and no whitespace: one text for one content. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** What a receipt covers: the bid's content (amount as fixed two-decimal text) and the time it was written. */
export function receiptContent(bid: Bid, recordedAt: Date): Record<string, unknown> {
  return {
    bidId: bid.id,
    version: bid.version,
    tenderId: bid.tenderId,
    lotId: bid.lotId ?? null,
    vendorId: bid.vendorId,
    amount: Number(bid.amount).toFixed(2),
    currency: bid.currency,
    documents: bid.documents,
    qualityAnswers: bid.qualityAnswers,
    recordedAt: recordedAt.toISOString(),
  };
}
