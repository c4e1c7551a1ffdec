import type { MikroORM } from '@mikro-orm/postgresql';
import type { SubgraphContext } from '../shared/context.js';
import type { InferenceConfig } from './config/inference-config.js';
import type { ProviderRegistry } from './provider-registry/provider-registry.js';
import type { UsageRecorder } from './usage/usage-recorder.js';

/**
 * What the inference subgraph runs for the life of its process: the configuration, the provider
 * registry with its engines, and the usage recorder. The HTTP interfaces and the GraphQL
 * resolvers share it, so that both reach the same engines, slots and records.
 */
export interface InferenceRuntime {
  config: InferenceConfig;
  /** The subgraph's database: the HTTP interfaces read usage (analytics) through it. */
  orm: MikroORM;
  registry: ProviderRegistry;
  usage: UsageRecorder;
  /** How deeply a request's JSON may nest (JSON_MAX_DEPTH). */
  jsonMaxDepth: number;
}

/** A request's context in the inference subgraph: the shared one and the runtime. */
export interface InferenceContext extends SubgraphContext {
  inference: InferenceRuntime;
}
