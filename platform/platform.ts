import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { EdgeOptions } from '../edge/index.js';
import { createPlatformPubSub } from '../subgraphs/shared/pubsub.js';
import { SUBGRAPH_NAMES, type PlatformConfig, type SubgraphName } from './config.js';
import { openIdentityStore } from '../identity/index.js';
import { LocalKeyStore } from '../identity/local-key-store.js';
import { startEdgeService } from './edge-service.js';
import { startSubgraphService } from './subgraph-service.js';

// The edge alone lives in edge-service.ts and a subgraph in subgraph-service.ts, so that each
// process of npm start's topology loads its own service's code only.
export { startEdgeService, startSubgraphService };

export interface RunningPlatform {
  graphqlUrl: string;
  baseUrl: string;
  subgraphUrls: Record<SubgraphName, string>;
  stop(): Promise<void>;
}

/**
 * Starts every subgraph on its internal port and the edge (gateway, REST bridge, /health) on the
 * public one, against an already running database. Stops what it started if any part fails.
 */
export async function startPlatform(config: PlatformConfig, databaseUrl: string, logger: Logger): Promise<RunningPlatform> {
  const stops: (() => Promise<unknown>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((error) => logger.error({ err: error }, 'stop failed'));
    stops.length = 0;
  };
  try {
    const identityOrm: MikroORM = await openIdentityStore(databaseUrl, logger.child({ service: 'identity' }));
    stops.push(() => identityOrm.close());
    // One event bus for the process's subgraphs: Redis-backed with REDIS_URL, so that events
    // reach subscribers connected to other instances.
    const pubsub = createPlatformPubSub(config.redisUrl);
    stops.push(() => pubsub.close());
    // The edge's key store, handed to the subgraphs that manage keys in this process: no HTTP hop.
    const keyStore = new LocalKeyStore(identityOrm, { maxActiveKeysPerAccount: config.maxActiveKeysPerAccount });
    const subgraphUrls = {} as Record<SubgraphName, string>;
    let localInference: EdgeOptions['localInference'];
    for (const name of SUBGRAPH_NAMES) {
      // Those started already are reached where they listen (the marketplace relays webhook events to membership).
      const service = await startSubgraphService(name, { ...config, subgraphUrls: { ...config.subgraphUrls, ...subgraphUrls } }, databaseUrl, keyStore, logger, pubsub);
      stops.push(service.close);
      subgraphUrls[name] = service.url;
      if (name === 'inference') localInference = service.httpRoutes;
    }
    // The inference subgraph runs in this process: the edge calls its OpenAI routes directly
    // instead of relaying over loopback HTTP (the same routes; one hop, sign and parse less).
    const gateway = await startEdgeService(config, identityOrm, subgraphUrls, logger, { localInference });
    stops.push(gateway.stop);
    return {
      graphqlUrl: gateway.url,
      baseUrl: gateway.url.replace(/\/graphql$/, ''),
      subgraphUrls,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
