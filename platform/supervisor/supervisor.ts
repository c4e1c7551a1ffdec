import { fork } from 'node:child_process';
import { createServer } from 'node:net';
import type { Logger } from 'pino';
import { SUBGRAPH_NAMES, type PlatformConfig, type SubgraphName } from '../config.js';
import { connectableHost } from '../../core/net.js';
import { siblingEntry } from './child-protocol.js';
import { SupervisedService } from './supervised-service.js';

export interface SupervisedPlatform {
  graphqlUrl: string;
  baseUrl: string;
  subgraphUrls: Record<SubgraphName, string>;
  services: SupervisedService[];
  stop(): Promise<void>;
}

/**
 * The platform as one process per service: the four subgraphs (started together), then the
 * edge's cluster over them. Each is restarted with backoff when it exits unasked while the others
 * keep serving. `stop` stops the edge (SIGTERM, then SIGKILL after 15 s), then the subgraphs, and
 * resolves once none is left.
 */
export async function startSupervisedPlatform(config: PlatformConfig, databaseUrl: string, logger: Logger): Promise<SupervisedPlatform> {
  const entry = siblingEntry(import.meta.url, 'service-child');
  // The subgraphs start before the edge and must know where its key store answers: a port left to
  // the system (PORT=0) is chosen here, before anything starts, and given to the edge.
  const port = config.port === 0 ? await freePort(config.host) : config.port;
  // EDGE_INTERNAL_URL: where the subgraphs reach the edge's key store (they never open its schema).
  const edgeInternalUrl = process.env.EDGE_INTERNAL_URL ? config.edgeInternalUrl : `http://${connectableHost(config.host)}:${port}`;
  const baseEnv: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, INTERNAL_SECRET: config.internalSecret, DATA_DIR: config.dataDir, EDGE_INTERNAL_URL: edgeInternalUrl };
  const service = (name: string, env: NodeJS.ProcessEnv) =>
    new SupervisedService({
      name,
      logger,
      // A process group of its own: a terminal's Ctrl-C reaches the supervisor alone, which then
      // stops the services in order; a supervisor that dies anyhow closes their IPC channel and
      // they stop themselves (child-protocol.ts).
      spawn: () => fork(entry, [name], { env, detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    });
  // One environment per subgraph, read at every spawn: a port the system chose (port 0) is
  // pinned into it once the subgraph answers, so a restart comes back at the same address.
  const subgraphEnvs = SUBGRAPH_NAMES.map(() => ({ ...baseEnv }));
  const subgraphs = SUBGRAPH_NAMES.map((name, i) => service(name, subgraphEnvs[i]));
  const started: SupervisedService[] = [];
  let edge: SupervisedService | undefined;
  // In order: the edge stops accepting and drains the requests under way (which still need their
  // subgraphs), then the subgraphs stop; the caller stops the database after them.
  const stop = async () => {
    if (edge) {
      logger.info('stopping the edge; the subgraphs once its requests under way are answered');
      await edge.stop();
    }
    await Promise.all(subgraphs.map((s) => s.stop()));
  };
  try {
    started.push(...subgraphs);
    const urls = await Promise.all(subgraphs.map((s) => s.start()));
    const subgraphUrls = Object.fromEntries(SUBGRAPH_NAMES.map((name, i) => [name, urls[i]])) as Record<SubgraphName, string>;
    const edgeEnv: NodeJS.ProcessEnv = { ...baseEnv, PORT: String(port) };
    for (const [i, name] of SUBGRAPH_NAMES.entries()) {
      subgraphEnvs[i][`${name.toUpperCase()}_PORT`] = new URL(subgraphUrls[name]).port;
      // The edge finds each subgraph where it answered.
      edgeEnv[`${name.toUpperCase()}_URL`] = subgraphUrls[name];
    }
    edge = service('gateway', edgeEnv);
    started.push(edge);
    const graphqlUrl = await edge.start();
    return { graphqlUrl, baseUrl: graphqlUrl.replace(/\/graphql$/, ''), subgraphUrls, services: started, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A port the system has free on `host` now (a moment's race with other programs, as any pick). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
