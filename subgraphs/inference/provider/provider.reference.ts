import DataLoader from 'dataloader';
import { loaderFor, type SubgraphContext } from '../../shared/context.js';
import type { Provider } from './provider.entity.js';
import { ProviderService } from './provider.service.js';

/** Resolves Provider references from other subgraphs, all of one request in a single statement. */
export const providerReference = {
  __resolveReference(reference: { id: string }, ctx: SubgraphContext): Promise<Provider | null> {
    const loader = loaderFor(
      ctx,
      'provider.byId',
      () => new DataLoader<string, Provider | null>((ids) => new ProviderService(ctx.em).findMany(ids)),
    );
    return loader.load(reference.id);
  },
};
