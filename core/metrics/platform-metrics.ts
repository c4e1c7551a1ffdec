import { AggregatorRegistry, Counter, Gauge, Histogram, collectDefaultMetrics, register } from 'prom-client';

/**
 * The platform's Prometheus metrics, on prom-client's default registry: one per process, so the
 * edge's cluster primary can gather its workers' (AggregatorRegistry reads the default registry).
 * Labels are bounded: services, interfaces, route templates, statuses, subgraphs, providers, models.
 */
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let defaultsCollected = false;
/** Process metrics (CPU, memory, event-loop lag, handles), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics();
}

export const httpRequests = new Counter({
  name: 'platform_http_requests_total',
  help: 'HTTP requests answered, by service, interface, route template and status',
  labelNames: ['service', 'interface', 'route', 'status'] as const,
});

export const httpDuration = new Histogram({
  name: 'platform_http_request_duration_seconds',
  help: 'Time from a request arriving to its response finishing',
  labelNames: ['service', 'interface', 'route'] as const,
  buckets: SECONDS,
});

export const rateLimitRefusals = new Counter({
  name: 'platform_rate_limit_refusals_total',
  help: 'Requests and subscriptions refused by a rate limit, by interface',
  labelNames: ['interface'] as const,
});

export const subgraphFetchDuration = new Histogram({
  name: 'platform_subgraph_fetch_duration_seconds',
  help: "The edge's fetches of a query plan from each subgraph",
  labelNames: ['subgraph'] as const,
  buckets: SECONDS,
});

export const subgraphFetchErrors = new Counter({
  name: 'platform_subgraph_fetch_errors_total',
  help: 'Subgraph fetches that failed (unreachable, or refused as a whole)',
  labelNames: ['subgraph', 'reason'] as const,
});

export const inferenceTokens = new Counter({
  name: 'platform_inference_tokens_total',
  help: 'Tokens of inference requests, by provider, model and kind (prompt or completion)',
  labelNames: ['provider', 'model', 'kind'] as const,
});

export const inferenceTimeToFirstToken = new Histogram({
  name: 'platform_inference_time_to_first_token_seconds',
  help: 'Time from an inference request to its first token, by provider and model',
  labelNames: ['provider', 'model'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
});

export const inferenceErrors = new Counter({
  name: 'platform_inference_errors_total',
  help: 'Inference requests that failed, by provider, model and error code',
  labelNames: ['provider', 'model', 'code'] as const,
});

type Reading = () => number;
/** Gauges read when scraped, from the parts of this process that know the number (summed). */
function liveGauge(name: string, help: string): (read: Reading) => () => void {
  const readings = new Set<Reading>();
  new Gauge({
    name,
    help,
    collect() {
      let total = 0;
      for (const read of readings) total += read();
      this.set(total);
    },
  });
  return (read) => {
    readings.add(read);
    return () => void readings.delete(read);
  };
}

/** Registers a reading of open websockets; returns its removal. */
export const trackOpenWebsockets = liveGauge('platform_websockets_open', 'Authenticated websockets open at the edge');
/** Registers a reading of active subscriptions; returns its removal. */
export const trackActiveSubscriptions = liveGauge('platform_subscriptions_active', 'GraphQL subscriptions running at the edge');

type LabelledReading = () => Promise<{ labels: Record<string, string>; value: number }[]>;
/** Gauges whose values come from a query at scrape time (queue depth and age, pool use). */
function queriedGauge(name: string, help: string, labelNames: string[]): (read: LabelledReading) => () => void {
  const readings = new Set<LabelledReading>();
  new Gauge({
    name,
    help,
    labelNames,
    async collect() {
      this.reset();
      const all = await Promise.all([...readings].map((read) => read().catch(() => [])));
      for (const rows of all) for (const { labels, value } of rows) this.inc(labels, value);
    },
  });
  return (read) => {
    readings.add(read);
    return () => void readings.delete(read);
  };
}

/** Pending items of a durable queue (`queue`: webhooks, documents). */
export const trackQueueDepth = queriedGauge('platform_queue_depth', 'Items waiting in a durable queue', ['queue']);
/** Age in seconds of the oldest item waiting in a durable queue. */
export const trackQueueAge = queriedGauge('platform_queue_oldest_age_seconds', 'Age of the oldest item waiting in a durable queue', ['queue']);
/** Database connections of a service's pool, by state (total, idle, waiting). */
export const trackDatabasePool = queriedGauge('platform_database_pool_connections', "Connections of a service's database pool, by state", ['service', 'state']);

let answering = false;
/**
 * In a cluster worker: answers the primary's requests for this process's metrics over IPC
 * (prom-client listens only once an AggregatorRegistry has been made in the process).
 */
export function answerClusterPrimary(): void {
  if (answering) return;
  answering = true;
  new AggregatorRegistry();
}

/** The text Prometheus scrapes, and its content type. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: register.contentType, body: await register.metrics() };
}
