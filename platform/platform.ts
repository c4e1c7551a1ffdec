import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { EdgeOptions } from '../gateway/index.js';
import { createPlatformPubSub, type PlatformPubSub } from '../subgraphs/shared/pubsub.js';
import { serveSubgraph, type RunningService } from '../subgraphs/shared/server.js';
import { inferenceConfigOf, SUBGRAPH_NAMES, type PlatformConfig, type SubgraphName } from './config.js';
import { openIdentityStore } from '../identity/index.js';
import { SUBGRAPH_FACTORIES } from './subgraph-factories.js';
import { startEdgeService } from './edge-service.js';
import type { Subgraph } from '../subgraphs/shared/subgraph.js';
import { ChatWebhookWorker } from '../subgraphs/membership/webhook/chat-webhook.worker.js';
import { createDocumentWorker } from '../subgraphs/membership/document/document-worker.factory.js';
import { documentClassifierFrom } from '../subgraphs/membership/document-classification/document-classifier.factory.js';

// The edge alone lives in edge-service.ts, so that the edge's processes load no subgraph.
export { startEdgeService };

export interface RunningPlatform {
  graphqlUrl: string;
  baseUrl: string;
  subgraphUrls: Record<SubgraphName, string>;
  stop(): Promise<void>;
}

/** One subgraph on SUBGRAPH_HOST and its port, with what it needs (the membership one uses the key store). */
export async function startSubgraphService(
  name: SubgraphName,
  config: PlatformConfig,
  databaseUrl: string,
  identityOrm: MikroORM,
  logger: Logger,
  pubsub: PlatformPubSub,
): Promise<RunningService & { close(): Promise<void>; httpRoutes?: Subgraph['httpRoutes'] }> {
  const child = logger.child({ service: name });
  // The settings' classifier (threshold, zero-shot provider) files documents in the worker and answers classify.
  const documentClassifier = name === 'membership' ? documentClassifierFrom(config.documentClassification, child) : undefined;
  const subgraph = await SUBGRAPH_FACTORIES[name]({
    databaseUrl,
    internalSecret: config.internalSecret,
    identityOrm,
    logger: child,
    pubsub,
    webhooks: config.webhooks,
    documents: config.documents,
    documentClassifier,
    maxActiveKeysPerAccount: config.maxActiveKeysPerAccount,
    inferenceConfig: name === 'inference' ? inferenceConfigOf(config) : undefined,
  });
  // Chat webhooks leave from the membership service; every instance polls the shared outbox.
  const webhookWorker = name === 'membership' ? new ChatWebhookWorker(subgraph.orm, { settings: config.webhooks, logger: child }) : undefined;
  // Documents are processed where they are stored; every instance works from the same queue.
  const documentWorker = name === 'membership' ? createDocumentWorker(subgraph.orm, config.documents, child, documentClassifier) : undefined;
  try {
    const service = await serveSubgraph(subgraph, { port: config.subgraphPorts[name], host: config.subgraphHost, logger: child });
    webhookWorker?.start();
    documentWorker?.start();
    return {
      ...service,
      httpRoutes: subgraph.httpRoutes,
      stop: service.stop,
      close: async () => {
        await webhookWorker?.stop();
        await documentWorker?.stop();
        await service.stop();
        await subgraph.close();
      },
    };
  } catch (error) {
    await subgraph.close();
    throw error;
  }
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
    const subgraphUrls = {} as Record<SubgraphName, string>;
    let localInference: EdgeOptions['localInference'];
    for (const name of SUBGRAPH_NAMES) {
      const service = await startSubgraphService(name, config, databaseUrl, identityOrm, logger, pubsub);
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
