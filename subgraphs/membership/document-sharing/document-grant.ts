import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Mode } from '../../../core/principal.js';

/** What a grant lets its bearer read: one document of one account and mode, for one tender, until `expiresAt`. */
export interface TenderDocumentGrant {
  tenderId: string;
  documentId: string;
  accountId: string;
  mode: Mode;
  /** Unix seconds. */
  expiresAt: number;
}

/**
 * The grant's payload when its signature (HMAC-SHA256 with the internal secret, over
 * "tender-document." and the payload) is right and it has not expired; null otherwise. The
 * marketplace signs grants (subgraphs/marketplace/tender/tender-document-grant.ts) for the buyer
 * and the vendors who may bid; this is the membership subgraph's only way to serve a document to
 * another account.
 */
export function verifyTenderDocumentGrant(secret: string, grant: string, now = Date.now()): TenderDocumentGrant | null {
  const [payload, signature, extra] = grant.split('.');
  if (!payload || !signature || extra !== undefined) return null;
  const expected = createHmac('sha256', secret).update(`tender-document.${payload}`).digest();
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let parsed: TenderDocumentGrant;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TenderDocumentGrant;
  } catch {
    return null;
  }
  if (typeof parsed.expiresAt !== 'number' || parsed.expiresAt * 1000 < now) return null;
  if (typeof parsed.documentId !== 'string' || typeof parsed.accountId !== 'string' || (parsed.mode !== 'live' && parsed.mode !== 'test')) return null;
  return parsed;
}

/** The part of the membership context that reads grants. */
export interface DocumentGrantContext {
  /** Checks a grant with the platform's internal secret. */
  documentGrants: { verify(grant: string): TenderDocumentGrant | null };
}
