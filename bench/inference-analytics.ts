/**
 * bench/inference-analytics: the analytics and recommendation queries over 10 million usage
 * records spread over the last three months, in monthly partitions, on a fresh embedded
 * PostgreSQL. Prints each query's time (median of 5 runs after a warm-up) and what its plan read:
 * the partitions (and the hourly sums, usage_hour) scanned and how. Run on demand: `npm run bench:inference-analytics`
 * (BENCH_ROWS to change the row count, BENCH_PG_PORT for the embedded server's port).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pino } from 'pino';
import { ensureDatabaseExists, startEmbeddedPostgres } from '../platform/database.js';
import { AnalyticsBucket } from '../subgraphs/inference/analytics/analytics-bucket.js';
import { AnalyticsService } from '../subgraphs/inference/analytics/analytics.service.js';
import { encodeUsageCursor } from '../subgraphs/inference/usage/usage-row.js';
import { inferenceConfigFrom } from '../subgraphs/inference/config/load-inference-config.js';
import { inferenceOrmOptions } from '../subgraphs/inference/mikro-orm.config.js';
import { ProviderRegistry } from '../subgraphs/inference/provider-registry/provider-registry.js';
import { RecommendationService } from '../subgraphs/inference/recommendation/recommendation.service.js';
import { RECOMMENDATION_CATEGORIES } from '../subgraphs/inference/recommendation/recommendation-category.js';
import { migrate, openOrm } from '../core/orm.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 10_000_000);
const DAY = 86_400_000;
const SPAN_DAYS = 91;
const RUNS = 5;

const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-analytics-'));
// Always a database of its own: ten million rows do not belong in DATABASE_URL's.
const server = await startEmbeddedPostgres({ dir: path.join(dataDir, 'postgres'), port: Number(process.env.BENCH_PG_PORT ?? 5498) });
const url = await ensureDatabaseExists(server.serverUrl, 'bench_analytics');
const orm = await openOrm({ clientUrl: url, ...inferenceOrmOptions });
const registry = await ProviderRegistry.create(
  inferenceConfigFrom({ providers: ['provider_a', 'provider_b', 'provider_c', 'provider_d'].map((id) => ({ id, name: id, engines: [{ type: 'ocr' }] })) }, null),
);
const connection = () => orm.em.getConnection();
const sql = (text: string, params: unknown[] = []) => connection().execute<Record<string, unknown>[]>(text, params, 'all');

try {
  await migrate(orm, url, 'inference');
  const now = new Date();
  const start = new Date(now.getTime() - SPAN_DAYS * DAY);

  // Monthly partitions over the span, as the recorder names them; the default one stays empty.
  for (let month = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), 1)); month <= now; month = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1))) {
    const next = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));
    const name = `usage_record_${month.toISOString().slice(0, 7).replace('-', '_')}`;
    await sql(`create table "inference"."${name}" partition of "inference"."usage_record" for values from ('${month.toISOString()}') to ('${next.toISOString()}')`);
  }

  // Rows in time order, as the recorder writes them: 4 providers x 5 models, 5 interfaces, 1000
  // accounts on the keyed interfaces, 62,500 client addresses on the keyless ones, 1.9% server errors.
  const fillStarted = performance.now();
  const CHUNK = 1_000_000;
  const stepMs = (SPAN_DAYS * DAY) / ROWS;
  for (let first = 0; first < ROWS; first += CHUNK) {
    const last = Math.min(first + CHUNK, ROWS) - 1;
    await sql(
      `insert into "inference"."usage_record" (id, occurred_at, account_id, key_id, client_address, interface, provider, model, prompt_tokens,
         completion_tokens, latency_ms, time_to_first_token_ms, streamed, status, error_code)
       select gen_random_uuid(), ts,
         case when keyed then ('00000000-0000-4000-8000-' || lpad((i % 1000)::text, 12, '0'))::uuid end,
         case when keyed then 'key_' || (i % 1000) end,
         case when not keyed then '10.' || (i % 250) || '.' || (i / 250 % 250) || '.1' end,
         iface, 'provider_' || chr(97 + (i % 4)::int), 'model-' || ((i * 7) % 5),
         20 + (i * 31) % 400, (i * 17) % 600, latency, case when i % 7 = 0 then null else latency / 5 end,
         i % 2 = 0, status, case when status >= 400 then 'upstream_error' end
       from (
         select i, ?::timestamptz + (i * ?::float8) * interval '1 millisecond' as ts,
           (array['service_t', 'service_i', 'proxy', 'gateway', 'graphql'])[1 + (i * 13) % 5] as iface,
           (i * 13) % 5 in (0, 1, 4) as keyed,
           50 + (i * 7919) % 3000 + (i % 4) * 200 as latency,
           case when i % 53 = 0 then 502 when i % 97 = 0 then 422 else 200 end::smallint as status
         from generate_series(?::bigint, ?::bigint) as i
       ) s`,
      [start, stepMs, first, last],
    );
    process.stdout.write(`\rfilled ${(last + 1).toLocaleString('en')} rows`);
  }
  await sql('analyze "inference"."usage_record"');
  const fillSeconds = (performance.now() - fillStarted) / 1000;
  const [{ size }] = await sql(`select pg_size_pretty(sum(pg_total_relation_size(c.oid))) as size from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = '"inference"."usage_record"'::regclass`);
  console.log(`\rfilled ${ROWS.toLocaleString('en')} rows over ${SPAN_DAYS} days in ${fillSeconds.toFixed(1)} s (${size} with indexes)`);

  /** The service on an EntityManager whose statements are EXPLAINed (ANALYZE) once, then run as they are. */
  const plans: unknown[] = [];
  const explaining = {
    getConnection: () => ({
      execute: async (text: string, params: unknown[], method: 'all') => {
        const [row] = await connection().execute<Record<string, unknown>[]>(`explain (analyze, buffers, format json) ${text}`, params, 'all');
        plans.push(row!['QUERY PLAN']);
        return connection().execute(text, params, method);
      },
    }),
  } as unknown as EntityManager;

  const read = (plan: unknown) => {
    const scans = new Map<string, Set<string>>();
    let removed = 0;
    const walk = (node: Record<string, unknown>) => {
      if (typeof node['Relation Name'] === 'string') {
        const name = node['Relation Name'];
        if (!scans.has(name)) scans.set(name, new Set());
        scans.get(name)!.add(String(node['Node Type']));
      }
      removed += Number(node['Subplans Removed'] ?? 0);
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    walk((plan as { Plan: Record<string, unknown> }[])[0]!.Plan);
    const parts = [...scans].map(([name, types]) => `${name.replace('usage_record_', 'partition ')} (${[...types].join(', ')})`);
    return `read ${parts.join('; ')}${removed ? `; ${removed} partitions removed at run time` : ''}`;
  };

  const all = { kind: 'all' } as const;
  const range = (days: number, end = now) => ({ from: new Date(end.getTime() - days * DAY), to: end });
  // A history page two months back: the cursor of the record nearest that time.
  const [deep] = await sql(`select id, occurred_at from "inference"."usage_record" where occurred_at >= ? order by occurred_at, id limit 1`, [new Date(now.getTime() - 60 * DAY)]);
  const deepCursor = encodeUsageCursor({ id: deep!.id as string, occurredAt: new Date(deep!.occurred_at as string) });
  const [address] = await sql(`select client_address from "inference"."usage_record" where occurred_at >= ? and client_address is not null limit 1`, [new Date(now.getTime() - 50 * DAY)]);
  const account = '00000000-0000-4000-8000-000000000042';

  const cases: [string, (em: EntityManager) => Promise<unknown>][] = [
    ['usage by model per day, 30 days, all calls', (em) => new AnalyticsService(em).usage(all, range(30), AnalyticsBucket.DAY)],
    ['usage per hour, 7 days, one provider and model', (em) => new AnalyticsService(em).usage(all, { ...range(7), provider: 'provider_b', model: 'model-3' }, AnalyticsBucket.HOUR)],
    ['usage by model per day, 30 days, one account', (em) => new AnalyticsService(em).usage({ kind: 'account', accountId: account }, range(30), AnalyticsBucket.DAY)],
    ['performance per model, 7 days, all calls', (em) => new AnalyticsService(em).performance(all, range(7))],
    ['performance per model, 90 days, one provider and model', (em) => new AnalyticsService(em).performance(all, { ...range(90), provider: 'provider_a', model: 'model-1' })],
    ['history page of 50, 60 days deep in a 90-day range', (em) => new AnalyticsService(em).history(all, { ...range(90), limit: 50, after: deepCursor })],
    ['history page of 50, one client address, 90 days', (em) => new AnalyticsService(em).history({ kind: 'address', address: address!.client_address as string }, { ...range(90), limit: 50 })],
    ['history page of 50, one account, 60 days deep', (em) => new AnalyticsService(em).history({ kind: 'account', accountId: account }, { ...range(90), limit: 50, after: deepCursor })],
    ['recommendations, every category (24 h measured)', (em) => new RecommendationService({ config: registry['config'], registry }, em).recommend(RECOMMENDATION_CATEGORIES)],
  ];

  console.log(`\n${'query'.padEnd(58)} ${'median'.padStart(9)} ${'min'.padStart(9)}  plan`);
  for (const [name, query] of cases) {
    await query(orm.em.fork() as EntityManager);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await query(orm.em.fork() as EntityManager);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    plans.length = 0;
    await query(explaining);
    console.log(`${name.padEnd(58)} ${`${times[RUNS >> 1]!.toFixed(1)} ms`.padStart(9)} ${`${times[0]!.toFixed(1)} ms`.padStart(9)}  ${plans.map(read).join(' | ')}`);
  }
} finally {
  await registry.close();
  await orm.close(true);
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}
