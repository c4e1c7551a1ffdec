import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { RateLimiterClusterMaster } from 'rate-limiter-flexible';
import { siblingEntry } from './child-protocol.js';
import { SupervisedService } from './supervised-service.js';

/**
 * The edge as one node:cluster primary and `workers` worker processes sharing its public port
 * (connections are dealt round-robin). The primary serves nothing itself: it keeps the workers
 * running (a worker that exits is restarted with backoff) and, without REDIS_URL, holds the
 * rate-limit counters every worker counts against, so a limit stays one limit whatever the
 * number of workers.
 */
export async function startEdgeCluster(options: {
  workers: number;
  databaseUrl: string;
  redisUrl: string | undefined;
  logger: Logger;
}): Promise<{ url: string; workers: SupervisedService[]; stop(): Promise<void> }> {
  if (!cluster.isPrimary) throw new Error('startEdgeCluster runs in the primary process only');
  // Created before any worker: workers' counters (gateway/rate-limit) ask it over IPC.
  if (!options.redisUrl) new RateLimiterClusterMaster();
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
  const stop = async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
  };
  try {
    const urls = await Promise.all(workers.map((worker) => worker.start()));
    return { url: urls[0], workers, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
