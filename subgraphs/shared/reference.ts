import DataLoader from 'dataloader';
import { loaderFor, type SubgraphContext } from './context.js';

/**
 * An entity's `__resolveReference`: every reference of one request goes through one DataLoader,
 * so a page of N references costs one `loadMany` (one SQL statement), not N.
 */
export function batchedReference<T, C extends SubgraphContext = SubgraphContext>(
  loaderName: string,
  loadMany: (ctx: C, ids: readonly string[]) => Promise<(T | null)[]>,
) {
  return {
    __resolveReference(reference: { id: string }, ctx: C): Promise<T | null> {
      return loaderFor(ctx, loaderName, () => new DataLoader<string, T | null>((ids) => loadMany(ctx, ids))).load(reference.id);
    },
  };
}
