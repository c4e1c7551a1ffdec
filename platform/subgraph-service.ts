import type { Logger } from 'pino';
import type { KeyStore } from '../core/key-store.js';
import type { PlatformPubSub } from '../subgraphs/shared/pubsub.js';
import type { RunningService } from '../core/listen.js';
import { serveSubgraph } from '../subgraphs/shared/server.js';
import type { Subgraph } from '../subgraphs/shared/subgraph.js';
import { inferenceConfigOf, type PlatformConfig, type SubgraphName } from './config.js';
import { SUBGRAPH_FACTORIES } from './subgraph-factories.js';
import { flushTraces, startTracing, tracerOf, tracingOn } from '../core/telemetry/tracing.js';
import { traceSql } from '../core/telemetry/sql-spans.js';
import { trackSubgraphMetrics } from './subgraph-metrics.js';

async function membershipWorkers() {
  const [{ ChatWebhookWorker }, { createDocumentWorker }, { documentClassifierFrom }, { MembershipClockWorker }] = await Promise.all([
    import('../subgraphs/membership/webhook/chat-webhook.worker.js'),
    import('../subgraphs/membership/document/document-worker.factory.js'),
    import('../subgraphs/membership/document-classification/document-classifier.factory.js'),
    import('../subgraphs/membership/clock/membership-clock.worker.js'),
  ]);
  return { ChatWebhookWorker, createDocumentWorker, documentClassifierFrom, MembershipClockWorker };
}

/**
 * One subgraph on SUBGRAPH_HOST and its port, with what it needs. The membership and traceroute
 * ones manage keys through `keyStore`: the edge's own in process, its internal endpoint when apart.
 */
export async function startSubgraphService(
  name: SubgraphName,
  config: PlatformConfig,
  databaseUrl: string,
  keyStore: KeyStore,
  logger: Logger,
  pubsub: PlatformPubSub,
): Promise<RunningService & { close(): Promise<void>; httpRoutes?: Subgraph['httpRoutes'] }> {
  const child = logger.child({ service: name });
  startTracing(config.tracing.tracesUrl);
  // The membership subgraph's workers, loaded only in its process.
  const membership = name === 'membership' ? await membershipWorkers() : undefined;
  // The settings' classifier (threshold, zero-shot provider) files documents in the worker and answers classify.
  const documentClassifier = membership?.documentClassifierFrom(config.documentClassification, child);
  const subgraph = await SUBGRAPH_FACTORIES[name]({
    databaseUrl,
    internalSecret: config.internalSecret,
    keyStore,
    logger: child,
    pubsub,
    webhooks: config.webhooks,
    documents: config.documents,
    documentClassifier,
    inferenceConfig: name === 'inference' ? inferenceConfigOf(config) : undefined,
    jsonMaxDepth: config.jsonMaxDepth,
    membership: config.membership,
    ocds: config.ocds,
  });
  // Chat webhooks leave from the membership service; every instance polls the shared outbox.
  const webhookWorker = membership ? new membership.ChatWebhookWorker(subgraph.orm, { settings: config.webhooks, logger: child }) : undefined;
  // Documents are processed where they are stored; every instance works from the same queue.
  const documentWorker = membership?.createDocumentWorker(subgraph.orm, config.documents, child, documentClassifier);
  // What dates passing tell (renewals due, …); every instance sweeps, each row is claimed once.
  const clockWorker = membership ? new membership.MembershipClockWorker(subgraph.orm, { settings: config.membership, logger: child }) : undefined;
  // The marketplace's deadlines and its webhook events, relayed to the membership subgraph that keeps the endpoints.
  const marketplaceClock =
    name === 'marketplace'
      ? new (await import('../subgraphs/marketplace/webhook/marketplace-clock.worker.js')).MarketplaceClockWorker(subgraph.orm, {
          membershipUrl: config.subgraphUrls.membership,
          internalSecret: config.internalSecret,
          logger: child,
        })
      : undefined;
  try {
    const service = await serveSubgraph(subgraph, {
      port: config.subgraphPorts[name],
      host: config.subgraphHost,
      logger: child,
      // Subscriptions' events cross instances through Redis: without it this instance is not ready.
      readiness: pubsub.ping ? { redis: () => pubsub.ping!() } : undefined,
    });
    const untrackMetrics = trackSubgraphMetrics(name, subgraph.orm);
    if (tracingOn()) traceSql(subgraph.orm, tracerOf(name));
    webhookWorker?.start();
    documentWorker?.start();
    clockWorker?.start();
    marketplaceClock?.start();
    return {
      ...service,
      httpRoutes: subgraph.httpRoutes,
      stop: service.stop,
      close: async () => {
        await webhookWorker?.stop();
        await documentWorker?.stop();
        await clockWorker?.stop();
        await marketplaceClock?.stop();
        await service.stop();
        untrackMetrics();
        await subgraph.close();
        await flushTraces();
      },
    };
  } catch (error) {
    await subgraph.close();
    throw error;
  }
}
