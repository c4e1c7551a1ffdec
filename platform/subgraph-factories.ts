import type { KeyStoreSubgraphOptions } from '../subgraphs/shared/key-store.context.js';
import type { Subgraph } from '../subgraphs/shared/subgraph.js';
import type { DocumentClassifier } from '../subgraphs/membership/document/document-pipeline.js';
import type { PlatformConfig, SubgraphName } from './config.js';

// Each subgraph's code is loaded when it is built: a process that runs one subgraph (npm start's
// topology) loads that one only.

/** How to build each subgraph; the membership and traceroute ones also use the edge's key store. */
export const SUBGRAPH_FACTORIES: Record<
  SubgraphName,
  (options: KeyStoreSubgraphOptions & { webhooks?: PlatformConfig['webhooks']; documents?: PlatformConfig['documents']; documentClassifier?: DocumentClassifier; inferenceConfig?: PlatformConfig['inference']; jsonMaxDepth?: number; membership?: PlatformConfig['membership']; ocds?: PlatformConfig['ocds'] }) => Promise<Subgraph>
> = {
  membership: async (options) => (await import('../subgraphs/membership/index.js')).createMembershipSubgraph(options) as Promise<Subgraph>,
  marketplace: async (options) => (await import('../subgraphs/marketplace/index.js')).createMarketplaceSubgraph(options),
  inference: async (options) => (await import('../subgraphs/inference/index.js')).createInferenceSubgraph(options),
  traceroute: async (options) => (await import('../subgraphs/traceroute/index.js')).createTracerouteSubgraph(options) as Promise<Subgraph>,
};
