import { loadConfig } from '../config.js';
import { openIdentityStore } from '../../identity/index.js';
import { createLogger } from '../../core/logger.js';
import { startEdgeService } from '../edge-service.js';
import { stopOnSignal } from '../service-entry.js';
import { reportReady, stopWithParent } from './child-protocol.js';

/*
 * One worker of the edge's cluster (edge-cluster.ts): the gateway, REST bridge and /health on the
 * shared public port, over the subgraphs at <NAME>_URL, against the database the primary passed.
 */
const config = loadConfig();
const logger = createLogger(config.logLevel, 'gateway');
stopWithParent();
try {
  const identityOrm = await openIdentityStore(config.databaseUrl!, logger);
  const gateway = await startEdgeService(config, identityOrm, config.subgraphUrls, logger).catch(async (error) => {
    await identityOrm.close();
    throw error;
  });
  stopOnSignal(logger, async () => {
    await gateway.stop();
    await identityOrm.close();
  });
  reportReady(gateway.url);
} catch (error) {
  process.stderr.write(`\nCannot start the gateway: ${error instanceof Error ? error.message : String(error)}\n\n`);
  process.exit(1);
}
