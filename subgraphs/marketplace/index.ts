import { createSubgraph, type Subgraph, type SubgraphOptions, type SubgraphParts } from '../shared/subgraph.js';
import { jobPostingReference } from './job/job-posting.reference.js';
import { JobPostingResolver } from './job/job-posting.resolver.js';
import { MemberJobsResolver } from './member/member-jobs.resolver.js';
import { memberReference } from './member/member.reference.js';
import { marketplaceOrmOptions } from './mikro-orm.config.js';

export const marketplaceParts: SubgraphParts = {
  name: 'marketplace',
  orm: marketplaceOrmOptions,
  resolvers: [JobPostingResolver, MemberJobsResolver],
  references: { JobPosting: jobPostingReference, Member: memberReference },
  servesKinds: ['live', 'test'],
};

/** Builds the marketplace subgraph (job postings; tenders come later) and migrates its schema. */
export function createMarketplaceSubgraph(options: SubgraphOptions): Promise<Subgraph> {
  return createSubgraph(marketplaceParts, options);
}
