import type { SubgraphName } from './config.js';
import { createPlatformPubSub } from '../subgraphs/shared/pubsub.js';
import { openIdentityStore } from './identity/index.js';
import { startSubgraphService } from './platform.js';
import { runServiceApart } from './service-entry.js';

/** Entry of a subgraph started on its own (its server.ts). */
export function runSubgraphApart(name: SubgraphName): Promise<void> {
  return runServiceApart(`the ${name} subgraph`, async (config, databaseUrl, logger) => {
    const identityOrm = await openIdentityStore(databaseUrl, logger, 2);
    const pubsub = createPlatformPubSub(config.redisUrl);
    try {
      const service = await startSubgraphService(name, config, databaseUrl, identityOrm, logger, pubsub);
      return {
        url: service.url,
        stop: async () => {
          await service.close();
          await pubsub.close();
          await identityOrm.close();
        },
      };
    } catch (error) {
      await pubsub.close();
      await identityOrm.close();
      throw error;
    }
  });
}
