import cluster from 'node:cluster';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { createEdge, listenEdge, type EdgeOptions } from '../edge/index.js';
import { readSupergraph } from '../schema/supergraph.js';
import type { RunningService } from '../core/listen.js';
import { TRACE_EXPORT_LIMITS, type PlatformConfig } from './config.js';
import { serveMetrics } from '../core/metrics/metrics-server.js';
import { flushTraces, startTracing } from '../core/telemetry/tracing.js';
import { answerClusterPrimary, collectProcessMetrics } from '../core/metrics/platform-metrics.js';

/** The gateway, REST bridge and /health on the public port, over subgraphs at `subgraphUrls`. */
export async function startEdgeService(
  config: PlatformConfig,
  identityOrm: MikroORM,
  subgraphUrls: Record<string, string>,
  logger: Logger,
  extra: Pick<EdgeOptions, 'limitsOff' | 'localInference'> = {},
): Promise<RunningService> {
  startTracing(config.tracing.tracesUrl);
  const edge = await createEdge({
    ...extra,
    supergraphSdl: readSupergraph(),
    subgraphUrls,
    internalSecret: config.internalSecret,
    identityOrm,
    logger: logger.child({ service: 'gateway' }),
    introspection: config.introspection,
    restBases: config.restBases,
    rateLimits: config.rateLimits,
    redisUrl: config.redisUrl,
    subscriptionLimits: config.subscriptions,
    documents: config.documents,
    tracerouteExport: TRACE_EXPORT_LIMITS,
    keyCacheSeconds: config.keyCacheSeconds,
    subgraphQueryDeduplication: config.subgraphQueryDeduplication,
    dashboardPath: config.dashboard.path,
    dashboard: config.dashboard,
    maxActiveKeysPerAccount: config.maxActiveKeysPerAccount,
    jsonMaxDepth: config.jsonMaxDepth,
    requestBounds: config.edgeRequests,
    trustProxy: config.trustProxy,
    crossOrigins: config.crossOrigins,
  });
  collectProcessMetrics();
  if (cluster.isWorker) answerClusterPrimary();
  // A cluster's workers are gathered by their primary (edge-cluster.ts), which serves the port.
  const servesMetrics = config.metrics.port !== undefined && !cluster.isWorker;
  try {
    const metrics = servesMetrics ? await serveMetrics(config.metrics.port!, config.metrics.host) : undefined;
    const running = await listenEdge(edge, config.port, config.host).catch(async (error) => {
      await metrics?.stop();
      throw error;
    });
    return {
      ...running,
      stop: async () => {
        await running.stop();
        await metrics?.stop();
        await flushTraces();
      },
    };
  } catch (error) {
    await edge.stop();
    throw error;
  }
}
