import { batchedReference } from '../../shared/reference.js';
import type { Vendor } from './vendor.entity.js';
import { VendorService } from './vendor.service.js';

/** Vendor references, scoped to the caller's mode. */
export const vendorReference = batchedReference<Vendor>('vendor.byId', (ctx, ids) => new VendorService(ctx.em, ctx.principal).findMany(ids));
