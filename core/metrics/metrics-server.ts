import http from 'node:http';
import { AggregatorRegistry, collectDefaultMetrics, Registry } from 'prom-client';
import { listen } from '../listen.js';
import { metricsText } from './platform-metrics.js';

/** The name prefix of the edge cluster primary's own process metrics. */
const PRIMARY_PREFIX = 'edge_primary_';

/**
 * Serves GET /metrics on a port of its own (METRICS_PORT on METRICS_HOST), apart from the public
 * one: the figures tell traffic and account activity, so they are never on the public port.
 * In a cluster primary, `cluster` gathers every worker's registry over IPC and sums them, and adds
 * the primary's own process metrics as `edge_primary_*`.
 */
export async function serveMetrics(port: number, host: string, options: { cluster?: boolean } = {}): Promise<{ port: number; stop(): Promise<void> }> {
  const aggregator = options.cluster ? new AggregatorRegistry() : undefined;
  // The primary's own process (memory, event loop, handles) beside its workers' sums: named apart,
  // since a sum of workers and one primary under one name would mean neither.
  const primary = aggregator ? new Registry() : undefined;
  if (primary) collectDefaultMetrics({ register: primary, prefix: PRIMARY_PREFIX });
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    const text = aggregator
      ? Promise.all([aggregator.clusterMetrics(), primary!.metrics()]).then(([workers, own]) => ({ contentType: aggregator.contentType, body: `${workers.trimEnd()}\n${own}` }))
      : metricsText();
    text.then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      () => res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"metrics_unavailable"}'),
    );
  });
  const bound = await listen(server, port, host, 'The metrics endpoint');
  return {
    port: bound,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
