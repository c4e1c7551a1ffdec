import { createSubgraph, type Subgraph, type SubgraphOptions } from '../shared/subgraph.js';
import { JobPostingResolver } from './job/job-posting.resolver.js';
import { marketplaceOrmOptions } from './mikro-orm.config.js';

/** Builds the marketplace subgraph (job postings; tenders come later) and migrates its schema. */
export function createMarketplaceSubgraph(options: SubgraphOptions): Promise<Subgraph> {
  return createSubgraph({ name: 'marketplace', orm: marketplaceOrmOptions, resolvers: [JobPostingResolver] }, options);
}
