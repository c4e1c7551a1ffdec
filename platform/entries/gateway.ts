import { runServiceApart } from '../service-entry.js';
import { startEdgeCluster } from '../supervisor/edge-cluster.js';
import { loadTopologyConfig } from '../supervisor/supervisor-config.js';

/**
 * The gateway, REST bridge and /health alone, over subgraphs at <NAME>_URL (defaults: local ports):
 * EDGE_WORKERS worker processes on the one port, as under `npm start`.
 */
await runServiceApart('the gateway', (config, databaseUrl, logger) =>
  startEdgeCluster({ workers: loadTopologyConfig().edgeWorkers, databaseUrl, redisUrl: config.redisUrl, logger, metrics: config.metrics }),
);
