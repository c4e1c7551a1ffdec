import { createSubgraph, type Subgraph, type SubgraphOptions, type SubgraphParts } from '../shared/subgraph.js';
import { inferenceOrmOptions } from './mikro-orm.config.js';
import { providerReference } from './provider/provider.reference.js';
import { ProviderResolver } from './provider/provider.resolver.js';
import { usageRecordReference } from './usage/usage.reference.js';
import { UsageResolver } from './usage/usage.resolver.js';

/** What defines the inference subgraph, also used to compose the supergraph without a database. */
export const inferenceParts: SubgraphParts = {
  name: 'inference',
  orm: inferenceOrmOptions,
  resolvers: [ProviderResolver, UsageResolver],
  references: { Provider: providerReference, InferenceUsageRecord: usageRecordReference },
  // Admin keys for the operators: setting a provider's status, and every account's usage.
  servesKinds: ['text', 'image', 'admin'],
};

/** Builds the inference subgraph (the providers the gateway fronts) and migrates its schema. */
export function createInferenceSubgraph(options: SubgraphOptions): Promise<Subgraph> {
  return createSubgraph(inferenceParts, options);
}
