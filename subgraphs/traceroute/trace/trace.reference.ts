import DataLoader from 'dataloader';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import type { Trace } from './trace.entity.js';
import { TraceService } from './trace.service.js';

/** Trace references from other subgraphs, by traceId, batched into one statement per request. */
export const traceReference = {
  __resolveReference(reference: { traceId: string }, ctx: SubgraphContext): Promise<Trace | null> {
    return loaderFor(ctx, 'trace.byId', () => new DataLoader<string, Trace | null>((ids) => new TraceService(ctx.em).findMany(ids))).load(
      reference.traceId,
    );
  },
};
