import { IdempotentOutcome } from '../shared/idempotent-outcome.entity.js';
import { idempotentOutcomesMigration } from '../shared/idempotent-outcomes.migration.js';
import { MarketplaceAudit } from './audit/marketplace-audit.entity.js';
import { Award } from './award/award.entity.js';
import { BidReceipt } from './bid/bid-receipt.entity.js';
import { Bid } from './bid/bid.entity.js';
import { Migration20261123002000Tenders } from './migrations/Migration20261123002000Tenders.js';
import { Tender } from './tender/tender.entity.js';
import { Vendor } from './vendor/vendor.entity.js';
import { JobPosting } from './job/job-posting.entity.js';
import { JobApplication } from './application/job-application.entity.js';
import { Migration20261123001200JobPostingLifecycle } from './migrations/Migration20261123001200JobPostingLifecycle.js';
import { Migration20261123001300JobApplications } from './migrations/Migration20261123001300JobApplications.js';
import { Migration20261122000200JobPostings } from './migrations/Migration20261122000200JobPostings.js';
import { Migration20261123001000MarketplaceAudit } from './migrations/Migration20261123001000MarketplaceAudit.js';
import { Migration20261201000600WebhookEvents } from './migrations/Migration20261201000600WebhookEvents.js';
import { MarketplaceWebhookEvent } from './webhook/marketplace-webhook-event.entity.js';

/** The marketplace subgraph's ORM: its entities and migrations, in the `marketplace` schema. */
export const marketplaceOrmOptions = {
  schema: 'marketplace',
  entities: [IdempotentOutcome, JobPosting, MarketplaceAudit, JobApplication, Tender, Vendor, Bid, BidReceipt, Award, MarketplaceWebhookEvent],
  migrations: [
    { name: 'Migration20261122000200JobPostings', class: Migration20261122000200JobPostings },
    { name: 'Migration20261123001000MarketplaceAudit', class: Migration20261123001000MarketplaceAudit },
    { name: 'Migration20261123001200JobPostingLifecycle', class: Migration20261123001200JobPostingLifecycle },
    { name: 'Migration20261123001300JobApplications', class: Migration20261123001300JobApplications },
    { name: 'Migration20261123002000Tenders', class: Migration20261123002000Tenders },
    { name: 'Migration20261201000600WebhookEvents', class: Migration20261201000600WebhookEvents },
    idempotentOutcomesMigration('marketplace'),
  ],
};
