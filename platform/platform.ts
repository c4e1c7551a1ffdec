import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { createEdge, listenEdge } from '../gateway/index.js';
import { readSupergraph } from '../schema/supergraph.js';
import { serveSubgraph, type RunningService } from '../subgraphs/shared/server.js';
import type { Subgraph } from '../subgraphs/shared/subgraph.js';
import { SUBGRAPH_NAMES, type PlatformConfig, type SubgraphName } from './config.js';
import { openIdentityStore } from './identity/index.js';
import { SUBGRAPH_FACTORIES } from './subgraph-factories.js';

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
    const subgraphUrls = {} as Record<SubgraphName, string>;
    const subgraphs: Subgraph[] = [];
    for (const name of SUBGRAPH_NAMES) {
      const subgraph = await SUBGRAPH_FACTORIES[name]({
        databaseUrl,
        internalSecret: config.internalSecret,
        identityOrm,
        logger: logger.child({ service: name }),
      });
      stops.push(() => subgraph.close());
      subgraphs.push(subgraph);
    }
    for (const subgraph of subgraphs) {
      const name = subgraph.name as SubgraphName;
      const service: RunningService = await serveSubgraph(subgraph, {
        port: config.subgraphPorts[name],
        logger: logger.child({ service: name }),
      });
      stops.push(service.stop);
      subgraphUrls[name] = service.url;
    }
    const edge = await createEdge({
      supergraphSdl: readSupergraph(),
      subgraphUrls,
      internalSecret: config.internalSecret,
      identityOrm,
      logger: logger.child({ service: 'gateway' }),
      introspection: config.introspection,
      restBases: config.restBases,
    });
    stops.push(edge.stop);
    const gateway = await listenEdge(edge, config.port, config.host);
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
