import DataLoader from 'dataloader';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import { UUID } from '../../shared/pagination.js';
import { Document } from '../document/document.entity.js';
import type { DocumentContext } from '../document/document-context.js';
import { PostgresDocumentStorage } from '../document/postgres-document-storage.js';
import type { DocumentGrantContext, TenderDocumentGrant } from './document-grant.js';
import type { TenderDocumentFileType } from './tender-document-file.type.js';
import type { TenderDocumentType } from './tender-document.type.js';

type Context = SubgraphContext & DocumentGrantContext & Partial<DocumentContext>;

/** The documents the grants name, each in its own account and mode, outside the trash: one statement for a page of them. */
async function documentsOf(ctx: Context, grants: readonly (TenderDocumentGrant | null)[]): Promise<(Document | null)[]> {
  const ids = [...new Set(grants.flatMap((grant) => (grant && UUID.test(grant.documentId) ? [grant.documentId] : [])))];
  const rows = ids.length ? await ctx.em.find(Document, { id: { $in: ids }, deletedAt: null }) : [];
  const byId = new Map(rows.map((row) => [row.id, row]));
  return grants.map((grant) => {
    const document = grant ? byId.get(grant.documentId) : undefined;
    return document && document.accountId === grant!.accountId && document.mode === grant!.mode ? document : null;
  });
}

function describe(grant: string, payload: TenderDocumentGrant, document: Document | null): TenderDocumentType {
  return {
    grant,
    id: payload.documentId,
    tenderId: payload.tenderId,
    available: document !== null,
    filename: document?.filename ?? null,
    title: document?.title ?? null,
    mimeType: document?.mimeType ?? null,
    sizeBytes: document?.sizeBytes ?? null,
    sha256: document?.sha256 ?? null,
  };
}

/**
 * TenderDocument references from the marketplace: a grant it signed, checked here. A grant that
 * does not verify resolves to null: the document stays the buyer's alone.
 */
export const tenderDocumentReference = {
  async __resolveReference(reference: { grant: string }, ctx: Context): Promise<TenderDocumentType | null> {
    const loader = loaderFor(
      ctx,
      'tenderDocument.byGrant',
      () =>
        new DataLoader<string, TenderDocumentType | null>(async (grants) => {
          const payloads = grants.map((grant) => ctx.documentGrants.verify(grant));
          const documents = await documentsOf(ctx, payloads);
          return grants.map((grant, i) => (payloads[i] ? describe(grant, payloads[i]!, documents[i]!) : null));
        }),
    );
    return loader.load(reference.grant);
  },
};

/** TenderDocumentFile references: the same, with the bytes read from storage. */
export const tenderDocumentFileReference = {
  async __resolveReference(reference: { grant: string }, ctx: Context): Promise<TenderDocumentFileType | null> {
    const payload = ctx.documentGrants.verify(reference.grant);
    if (!payload) return null;
    const [document] = await documentsOf(ctx, [payload]);
    const { title: _title, ...described } = describe(reference.grant, payload, document);
    if (!document) return { ...described, contentBase64: null };
    const storage = ctx.documentStorage ?? new PostgresDocumentStorage(ctx.em);
    const chunks: Buffer[] = [];
    for await (const chunk of storage.read(document.blobId)) chunks.push(chunk as Buffer);
    return { ...described, contentBase64: Buffer.concat(chunks).toString('base64') };
  },
};
