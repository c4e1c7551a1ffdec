import { batchedReference } from '../../shared/reference.js';
import type { Bid } from './bid.entity.js';
import { BidService } from './bid.service.js';

/** Bid references: only the bids the caller may see (the sealed-bid rule), else null; one statement per batch. */
export const bidReference = batchedReference<Bid>('bid.byId', (ctx, ids) => new BidService(ctx.em, ctx.principal).findMany(ids));
