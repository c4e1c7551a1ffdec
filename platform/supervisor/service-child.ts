import { loadConfig, SUBGRAPH_NAMES, type SubgraphName } from '../config.js';
import { createLogger } from '../../core/logger.js';
import { stopOnSignal } from '../service-entry.js';
import { reportReady, stopWithParent } from './child-protocol.js';
import { loadTopologyConfig } from './supervisor-config.js';

/*
 * A process the supervisor starts: `service-child <subgraph>` runs that subgraph (the membership
 * one with the webhook and document workers), `service-child gateway` the edge's cluster primary.
 * The supervisor passes DATABASE_URL (its database is already up and the identity schema migrated)
 * and, for the edge, where each subgraph answers.
 */
const name = process.argv[2];
const config = loadConfig();
const logger = createLogger(config.logLevel, name);
stopWithParent();
try {
  if (!config.databaseUrl) throw new Error('DATABASE_URL is not set: this entry is started by the supervisor (npm start)');
  let service: { url: string; stop(): Promise<void> };
  // Each kind of process loads its own code only: the edge's primary serves nothing and needs
  // none of the subgraphs' (nor the gateway's, which its workers load).
  if (name === 'gateway') {
    const { startEdgeCluster } = await import('./edge-cluster.js');
    service = await startEdgeCluster({
      workers: loadTopologyConfig().edgeWorkers,
      databaseUrl: config.databaseUrl,
      redisUrl: config.redisUrl,
      logger,
    });
  } else if ((SUBGRAPH_NAMES as readonly string[]).includes(name)) {
    const { startSubgraphApart } = await import('../subgraph-apart.js');
    service = await startSubgraphApart(name as SubgraphName, config, config.databaseUrl, logger);
  } else {
    throw new Error(`unknown service "${name}": expected gateway or one of ${SUBGRAPH_NAMES.join(', ')}`);
  }
  stopOnSignal(logger, () => service.stop());
  reportReady(service.url);
} catch (error) {
  process.stderr.write(`\nCannot start ${name}: ${error instanceof Error ? error.message : String(error)}\n\n`);
  process.exit(1);
}
