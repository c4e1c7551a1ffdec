import { batchedReference } from '../../shared/reference.js';
import type { Trace } from './trace.entity.js';
import { TraceService } from './trace.service.js';

/** Trace references from other subgraphs (traces are public, so no account scope). */
export const traceReference = batchedReference<Trace>('trace.byId', (ctx, ids) => new TraceService(ctx.em).findMany(ids));
