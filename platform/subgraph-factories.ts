import { createMarketplaceSubgraph } from '../subgraphs/marketplace/index.js';
import { createInferenceSubgraph } from '../subgraphs/inference/index.js';
import { createMembershipSubgraph } from '../subgraphs/membership/index.js';
import { createTracerouteSubgraph } from '../subgraphs/traceroute/index.js';
import type { KeyStoreSubgraphOptions } from '../subgraphs/shared/key-store.context.js';
import type { Subgraph } from '../subgraphs/shared/subgraph.js';
import type { DocumentClassifier } from '../subgraphs/membership/document/document-pipeline.js';
import type { PlatformConfig, SubgraphName } from './config.js';

/** How to build each subgraph; the membership one also needs the key store. */
export const SUBGRAPH_FACTORIES: Record<
  SubgraphName,
  (options: KeyStoreSubgraphOptions & { webhooks?: PlatformConfig['webhooks']; documents?: PlatformConfig['documents']; documentClassifier?: DocumentClassifier; inferenceConfig?: PlatformConfig['inference'] }) => Promise<Subgraph>
> = {
  membership: (options) => createMembershipSubgraph(options) as Promise<Subgraph>,
  marketplace: createMarketplaceSubgraph,
  inference: createInferenceSubgraph,
  traceroute: (options) => createTracerouteSubgraph(options) as Promise<Subgraph>,
};
