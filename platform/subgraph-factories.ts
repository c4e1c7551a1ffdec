import type { MikroORM } from '@mikro-orm/postgresql';
import { createMarketplaceSubgraph } from '../subgraphs/marketplace/index.js';
import { createInferenceSubgraph } from '../subgraphs/inference/index.js';
import { createMembershipSubgraph } from '../subgraphs/membership/index.js';
import { createTracerouteSubgraph } from '../subgraphs/traceroute/index.js';
import type { Subgraph, SubgraphOptions } from '../subgraphs/shared/subgraph.js';
import type { PlatformConfig, SubgraphName } from './config.js';

/** How to build each subgraph; the membership one also needs the key store. */
export const SUBGRAPH_FACTORIES: Record<
  SubgraphName,
  (options: SubgraphOptions & { identityOrm: MikroORM; webhooks?: PlatformConfig['webhooks']; maxActiveKeysPerAccount?: number }) => Promise<Subgraph>
> = {
  membership: (options) => createMembershipSubgraph(options) as Promise<Subgraph>,
  marketplace: createMarketplaceSubgraph,
  inference: createInferenceSubgraph,
  traceroute: (options) => createTracerouteSubgraph(options) as Promise<Subgraph>,
};
