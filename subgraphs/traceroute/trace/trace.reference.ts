import DataLoader from 'dataloader';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import type { Trace } from './trace.entity.js';
import { TraceService } from './trace.service.js';

/** Resolves Trace references from other subgraphs, all of one request in a single statement. */
export const traceReference = {
  __resolveReference(reference: { id: string }, ctx: SubgraphContext): Promise<Trace | null> {
    const loader = loaderFor(
      ctx,
      'trace.byId',
      () => new DataLoader<string, Trace | null>((ids) => new TraceService(ctx.em).findMany(ids)),
    );
    return loader.load(reference.id);
  },
};
