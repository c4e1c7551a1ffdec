import type { PublishedInterface } from '../../published-interface.js';
import { internalKeyStoreRoutes } from './internal-key-store.routes.js';

/** The key store the subgraphs call (INTERNAL_SECRET), for keys they issue and check. */
export const internalKeyStore: PublishedInterface = {
  name: 'internal-key-store',
  mount(edge) {
    const { options } = edge;
    edge.app.use(internalKeyStoreRoutes({ identityOrm: edge.identityOrm, internalSecret: options.internalSecret, maxActiveKeysPerAccount: options.maxActiveKeysPerAccount }));
  },
};
