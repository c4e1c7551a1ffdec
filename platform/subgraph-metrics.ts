import type { MikroORM } from '@mikro-orm/postgresql';
import { collectProcessMetrics, trackDatabasePool, trackQueueAge, trackQueueDepth } from '../core/metrics/platform-metrics.js';
import type { SubgraphName } from './config.js';

interface QueueRow {
  queue: string;
  depth: number;
  age: number;
}

/** What each durable queue of the membership subgraph holds now, asked when Prometheus scrapes. */
const MEMBERSHIP_QUEUES = `
  select 'webhooks' as "queue", count(*)::int as "depth", coalesce(extract(epoch from now() - min("created_at")), 0)::float8 as "age"
    from "membership"."chat_webhook_delivery" where "status" = 'pending'
  union all
  select 'documents', count(*)::int, coalesce(extract(epoch from now() - min("created_at")), 0)::float8
    from "membership"."document" where "status" in ('pending', 'processing') and "deleted_at" is null`;

/**
 * The gauges a subgraph's process reads at scrape time: its database pool and, for membership,
 * the webhook outbox and the document queue. Returns their removal, for the service's stop.
 */
export function trackSubgraphMetrics(name: SubgraphName, orm: MikroORM): () => void {
  collectProcessMetrics();
  const removals = [
    trackDatabasePool(async () => {
      const pool = await orm.em.getConnection().getNativeClient();
      return [
        { labels: { service: name, state: 'total' }, value: pool.totalCount },
        { labels: { service: name, state: 'idle' }, value: pool.idleCount },
        { labels: { service: name, state: 'waiting' }, value: pool.waitingCount },
      ];
    }),
  ];
  if (name === 'membership') {
    // One query for both gauges of a scrape, whichever of them asks first.
    let pending: Promise<QueueRow[]> | undefined;
    const queues = () => (pending ??= orm.em.getConnection().execute<QueueRow[]>(MEMBERSHIP_QUEUES).finally(() => setImmediate(() => (pending = undefined))));
    removals.push(
      trackQueueDepth(async () => (await queues()).map((row) => ({ labels: { queue: row.queue }, value: row.depth }))),
      trackQueueAge(async () => (await queues()).map((row) => ({ labels: { queue: row.queue }, value: row.age }))),
    );
  }
  return () => removals.forEach((remove) => remove());
}
