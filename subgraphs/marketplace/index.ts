import { createSubgraph, type Subgraph, type SubgraphOptions, type SubgraphParts } from '../shared/subgraph.js';
import { jobPostingReference } from './job/job-posting.reference.js';
import { JobPostingResolver } from './job/job-posting.resolver.js';
import { MemberJobsResolver } from './member/member-jobs.resolver.js';
import { memberReference } from './member/member.reference.js';
import { marketplaceOrmOptions } from './mikro-orm.config.js';
import { AwardResolver } from './award/award.resolver.js';
import { bidReference } from './bid/bid.reference.js';
import { BidResolver } from './bid/bid.resolver.js';
import { tenderReference } from './tender/tender.reference.js';
import { TenderResolver } from './tender/tender.resolver.js';
import { vendorReference } from './vendor/vendor.reference.js';
import { VendorResolver } from './vendor/vendor.resolver.js';
import { signTenderDocumentGrant, type TenderDocumentGrant } from './tender/tender-document-grant.js';
import { DEFAULT_OCDS_SETTINGS, type OcdsSettings } from './tender/ocds-settings.js';
import { JobApplicationResolver } from './application/job-application.resolver.js';
import { jobApplicationReference } from './application/job-application.reference.js';
import { JobMatchResolver } from './match/job-match.resolver.js';
import { MemberJobMatchesResolver } from './match/matching-member.resolver.js';
import { matchingJobReference } from './match/matching-job.reference.js';
import { matchingMemberReference } from './match/matching-member.reference.js';

export const marketplaceParts: SubgraphParts = {
  name: 'marketplace',
  orm: marketplaceOrmOptions,
  resolvers: [JobPostingResolver, MemberJobsResolver, JobApplicationResolver, JobMatchResolver, MemberJobMatchesResolver, TenderResolver, VendorResolver, BidResolver, AwardResolver],
  references: { JobPosting: jobPostingReference, Member: memberReference, JobApplication: jobApplicationReference, MatchingJob: matchingJobReference, MatchingMember: matchingMemberReference, Tender: tenderReference, Vendor: vendorReference, Bid: bidReference },
  servesKinds: ['live', 'test'],
  // Vendor qualification is the platform operator's: that one mutation takes admin keys, and only it.
  kindsByField: { 'Mutation.qualifyVendor': ['admin'] },
};

/** Builds the marketplace subgraph (job postings and applications; tenders, vendors, sealed bids and awards) and migrates its schema. */
export function createMarketplaceSubgraph(options: SubgraphOptions & { ocds?: OcdsSettings }): Promise<Subgraph> {
  const ocdsSettings = options.ocds ?? DEFAULT_OCDS_SETTINGS;
  return createSubgraph(marketplaceParts, options, (base) => ({
    ...base,
    ocdsSettings,
    // Vendors read a tender's documents through grants the membership subgraph checks with the same secret.
    tenderDocumentGrants: { sign: (grant: TenderDocumentGrant) => signTenderDocumentGrant(options.internalSecret, grant) },
  }));
}
