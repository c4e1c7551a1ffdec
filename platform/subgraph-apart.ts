import type { Logger } from 'pino';
import type { PlatformConfig, SubgraphName } from './config.js';
import { createPlatformPubSub } from '../subgraphs/shared/pubsub.js';
import { KeyStoreClient } from '../subgraphs/shared/key-store.client.js';
import { startSubgraphService } from './subgraph-service.js';
import { runServiceApart } from './service-entry.js';

/**
 * One subgraph in a process of its own, with its own event bus: chat, bid and application events
 * are published and subscribed within the subgraph that owns them, so one process per subgraph
 * still delivers them without Redis (several instances of one subgraph need REDIS_URL). Keys are
 * the edge's: this process reaches them at EDGE_INTERNAL_URL and never opens the `identity` schema.
 */
export async function startSubgraphApart(
  name: SubgraphName,
  config: PlatformConfig,
  databaseUrl: string,
  logger: Logger,
): Promise<{ url: string; stop(): Promise<void> }> {
  const keyStore = new KeyStoreClient(config.edgeInternalUrl, config.internalSecret);
  const pubsub = createPlatformPubSub(config.redisUrl);
  try {
    const service = await startSubgraphService(name, config, databaseUrl, keyStore, logger, pubsub);
    return {
      url: service.url,
      stop: async () => {
        await service.close();
        await pubsub.close();
        await keyStore.close();
      },
    };
  } catch (error) {
    await pubsub.close();
    await keyStore.close();
    throw error;
  }
}

/** Entry of a subgraph started on its own (platform/entries/<name>.ts). */
export function runSubgraphApart(name: SubgraphName): Promise<void> {
  return runServiceApart(`the ${name} subgraph`, (config, databaseUrl, logger) => startSubgraphApart(name, config, databaseUrl, logger));
}
