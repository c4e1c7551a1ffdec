import { createHmac } from 'node:crypto';
import type { Mode } from '../../../core/principal.js';

/**
 * A grant to read one of a tender's documents: what the membership subgraph, which keeps the
 * buyer's documents, needs to serve it to someone other than the buyer. The marketplace signs it
 * with the platform's internal secret once it has decided the caller may bid; membership checks
 * the signature and serves that document of that account and mode, and nothing else. The format
 * is `base64url(JSON payload) "." base64url(HMAC-SHA256(secret, "tender-document." payload))`,
 * read by subgraphs/membership/document-sharing/document-grant.ts.
 */
export interface TenderDocumentGrant {
  tenderId: string;
  documentId: string;
  /** The buyer: the document's account. */
  accountId: string;
  mode: Mode;
  /** Unix seconds; grants live for the request that made them, and a little more. */
  expiresAt: number;
}

/** How long a grant may be used: the gateway fetches the document within the same request. */
export const GRANT_SECONDS = 300;

export function signTenderDocumentGrant(secret: string, grant: TenderDocumentGrant): string {
  const payload = Buffer.from(JSON.stringify(grant)).toString('base64url');
  const signature = createHmac('sha256', secret).update(`tender-document.${payload}`).digest('base64url');
  return `${payload}.${signature}`;
}
