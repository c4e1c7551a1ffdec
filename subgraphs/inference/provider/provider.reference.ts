import { batchedReference } from '../../shared/reference.js';
import type { Provider } from './provider.entity.js';
import { ProviderService } from './provider.service.js';

/** Provider references from other subgraphs (providers are shared reference data). */
export const providerReference = batchedReference<Provider>('provider.byId', (ctx, ids) =>
  new ProviderService(ctx.em).findMany(ids),
);
