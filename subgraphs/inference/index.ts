import { pino } from 'pino';
import { DEFAULT_JSON_MAX_DEPTH } from '../../core/json-depth.js';
import { createSubgraph, type Subgraph, type SubgraphOptions, type SubgraphParts } from '../shared/subgraph.js';
import type { InferenceConfig } from './config/inference-config.js';
import { loadInferenceConfig } from './config/load-inference-config.js';
import { AnalyticsResolver } from './analytics/analytics.resolver.js';
import { GenerationResolver } from './generation/generation.resolver.js';
import type { InferenceContext, InferenceRuntime } from './inference-context.js';
import { inferenceOrmOptions } from './mikro-orm.config.js';
import { createOpenAiRoutes, OPENAI_ROUTES_PREFIX, interfaceRoot } from './openai/openai.routes.js';
import { providerReference } from './provider/provider.reference.js';
import { RecommendationResolver } from './recommendation/recommendation.resolver.js';
import { ProviderResolver } from './provider/provider.resolver.js';
import { ProviderRegistry } from './provider-registry/provider-registry.js';
import { ProviderStatusFeed } from './provider/provider-status.feed.js';
import { usageRecordReference } from './usage/usage.reference.js';
import { UsageRecorder } from './usage/usage-recorder.js';
import { UsageRetention } from './usage/usage-retention.js';
import { ResponseRetention } from './responses/response-retention.js';
import { UsageResolver } from './usage/usage.resolver.js';

/** What defines the inference subgraph, also used to compose the supergraph without a database. */
export const inferenceParts: SubgraphParts = {
  name: 'inference',
  orm: inferenceOrmOptions,
  resolvers: [ProviderResolver, UsageResolver, GenerationResolver, AnalyticsResolver, RecommendationResolver],
  references: { Provider: providerReference, InferenceUsageRecord: usageRecordReference },
  // Admin keys for the operators: setting a provider's status, and every account's usage.
  servesKinds: ['text', 'image', 'admin'],
};

export interface InferenceSubgraphOptions extends SubgraphOptions {
  /** The providers, engines, interfaces and plans; read from INFERENCE_CONFIG (or the defaults) when absent. */
  inferenceConfig?: InferenceConfig;
  /** How deeply a request's JSON may nest (JSON_MAX_DEPTH); default 64. */
  jsonMaxDepth?: number;
}

/**
 * Builds the inference subgraph: the provider registry over its engines (the embedded ones load
 * here), the usage recorder, the GraphQL schema, and the OpenAI-compatible HTTP interfaces the
 * edge relays its four REST mounts to.
 */
export async function createInferenceSubgraph(options: InferenceSubgraphOptions): Promise<Subgraph<InferenceContext>> {
  const config = options.inferenceConfig ?? loadInferenceConfig();
  const logger = options.logger?.child({ component: 'inference' }) ?? pino({ level: 'silent' });
  // The feed needs the subgraph's database, the registry must exist first: status changes probed
  // before the feed is there are caught up by its sync below.
  let feed: ProviderStatusFeed | undefined;
  const registry = await ProviderRegistry.create(config, {
    logger,
    onChange: (report) => {
      logger.info({ provider: report.id, status: report.status }, 'provider status changed');
      feed?.changed(report);
    },
    // At its concurrency limit or no longer: subscribers of providerStatusChanged see inFlight move.
    onLoad: (report) => feed?.changed(report),
  });
  let runtime: InferenceRuntime | undefined;
  let subgraph: Subgraph<InferenceContext>;
  try {
    subgraph = await createSubgraph<InferenceContext>(inferenceParts, options, (base) => ({ ...base, inference: runtime! }));
  } catch (error) {
    await registry.close();
    throw error;
  }
  const usage = new UsageRecorder(subgraph.orm, { logger });
  try {
    feed = new ProviderStatusFeed(subgraph.orm, subgraph.pubsub, logger);
    await feed.sync(config, registry.status());
  } catch (error) {
    await registry.close();
    await usage.close();
    await subgraph.close();
    throw error;
  }
  runtime = { config, orm: subgraph.orm, registry, usage, jsonMaxDepth: options.jsonMaxDepth ?? DEFAULT_JSON_MAX_DEPTH };
  const retention = new UsageRetention(subgraph.orm, logger, config.usage.retentionMonths);
  retention.start();
  const responsesRetention = new ResponseRetention(subgraph.orm, logger);
  responsesRetention.start();
  const { router } = createOpenAiRoutes(runtime, logger);
  return {
    ...subgraph,
    httpRoutes: router,
    keylessPaths: [interfaceRoot('proxy'), interfaceRoot('gateway')],
    close: async () => {
      // Engines first (generations end), then the records they produced, then the database.
      await registry.close();
      await feed?.settled();
      await retention.close();
      await responsesRetention.close();
      await usage.close();
      await subgraph.close();
    },
  };
}

export { OPENAI_ROUTES_PREFIX };
