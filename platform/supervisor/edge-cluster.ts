import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { RateLimiterClusterMaster } from 'rate-limiter-flexible';
import { siblingEntry } from './child-protocol.js';
import { PersistedQueryStore } from './persisted-query-store.js';
import { SupervisedService } from './supervised-service.js';
import { serveMetrics } from '../../core/metrics/metrics-server.js';

/**
 * The edge as one node:cluster primary and `workers` worker processes sharing its public port
 * (each worker accepts from the shared socket). The primary serves nothing itself: it keeps the
 * workers running (a worker that exits is restarted with backoff) and, without REDIS_URL, holds
 * the rate-limit counters every worker counts against, so a limit stays one limit whatever the
 * number of workers, and the automatic persisted queries every worker finds.
 */
export async function startEdgeCluster(options: {
  workers: number;
  databaseUrl: string;
  redisUrl: string | undefined;
  logger: Logger;
  /** METRICS_PORT and METRICS_HOST: the workers' metrics, summed, served by this primary. */
  metrics?: { port: number | undefined; host: string };
}): Promise<{ url: string; workers: SupervisedService[]; stop(): Promise<void> }> {
  if (!cluster.isPrimary) throw new Error('startEdgeCluster runs in the primary process only');
  // Created before any worker: workers' counters (gateway/rate-limit) ask it over IPC.
  if (!options.redisUrl) new RateLimiterClusterMaster();
  // Likewise the automatic persisted queries: registered through one worker, found by all.
  if (!options.redisUrl) {
    const persistedQueries = new PersistedQueryStore();
    cluster.on('message', (worker, message) => persistedQueries.handle(worker, message));
  }
  // The workers accept connections themselves. With node's round-robin the primary accepts and
  // passes each on, and one passed to a worker that dies before taking it stays open in the
  // primary with nobody to answer: its client waits for its own timeout. Accepted by a worker, a
  // connection dies with it and its client sees that at once; one not yet accepted waits in the
  // kernel's queue for the other workers.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  // Workers run this module's sibling with the primary's own runtime flags (tsx's loader, or none from dist).
  cluster.setupPrimary({ exec: siblingEntry(import.meta.url, 'edge-worker'), args: [] });
  const workers = Array.from(
    { length: options.workers },
    (_, index) =>
      new SupervisedService({
        name: `gateway worker ${index + 1}`,
        logger: options.logger,
        spawn: () => cluster.fork({ DATABASE_URL: options.databaseUrl }).process,
        stopTimeoutMs: 10_000,
      }),
  );
  let metrics: { stop(): Promise<void> } | undefined;
  const stop = async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await metrics?.stop();
  };
  try {
    const urls = await Promise.all(workers.map((worker) => worker.start()));
    if (options.metrics?.port !== undefined) metrics = await serveMetrics(options.metrics.port, options.metrics.host, { cluster: true });
    return { url: urls[0], workers, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
