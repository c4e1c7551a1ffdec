import { batchedReference } from '../../shared/reference.js';
import type { Document } from './document.entity.js';
import type { DocumentContext } from './document-context.js';
import { DocumentService } from './document.service.js';

/** Document references from other subgraphs (a job application's résumé), scoped to the caller's account and mode. */
export const documentReference = batchedReference<Document, DocumentContext>('document.byId', (ctx, ids) =>
  new DocumentService(ctx.em, ctx.principal, ctx.documentSettings, ctx.documentStorage).findMany(ids),
);
