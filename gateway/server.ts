import { openIdentityStore } from '../platform/identity/index.js';
import { startEdgeService } from '../platform/platform.js';
import { runServiceApart } from '../platform/service-entry.js';

/** The gateway, REST bridge and /health alone, over subgraphs at <NAME>_URL (defaults: local ports). */
await runServiceApart('the gateway', async (config, databaseUrl, logger) => {
  const identityOrm = await openIdentityStore(databaseUrl, logger);
  try {
    const gateway = await startEdgeService(config, identityOrm, config.subgraphUrls, logger);
    return {
      url: gateway.url,
      stop: async () => {
        await gateway.stop();
        await identityOrm.close();
      },
    };
  } catch (error) {
    await identityOrm.close();
    throw error;
  }
});
