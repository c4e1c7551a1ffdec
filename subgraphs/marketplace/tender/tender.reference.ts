import { batchedReference } from '../../shared/reference.js';
import type { Tender } from './tender.entity.js';
import { TenderService } from './tender.service.js';

/** Tender references, scoped to the caller's mode and visibility. */
export const tenderReference = batchedReference<Tender>('tender.byId', (ctx, ids) => new TenderService(ctx.em, ctx.principal).findMany(ids));
