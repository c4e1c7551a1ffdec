import { MarketplaceAudit } from './audit/marketplace-audit.entity.js';
import { JobPosting } from './job/job-posting.entity.js';
import { JobApplication } from './application/job-application.entity.js';
import { Migration20261123001200JobPostingLifecycle } from './migrations/Migration20261123001200JobPostingLifecycle.js';
import { Migration20261123001300JobApplications } from './migrations/Migration20261123001300JobApplications.js';
import { Migration20261122000200JobPostings } from './migrations/Migration20261122000200JobPostings.js';
import { Migration20261123001000MarketplaceAudit } from './migrations/Migration20261123001000MarketplaceAudit.js';

/** The marketplace subgraph's ORM: its entities and migrations, in the `marketplace` schema. */
export const marketplaceOrmOptions = {
  schema: 'marketplace',
  entities: [JobPosting, MarketplaceAudit, JobApplication],
  migrations: [
    { name: 'Migration20261122000200JobPostings', class: Migration20261122000200JobPostings },
    { name: 'Migration20261123001000MarketplaceAudit', class: Migration20261123001000MarketplaceAudit },
    { name: 'Migration20261123001200JobPostingLifecycle', class: Migration20261123001200JobPostingLifecycle },
    { name: 'Migration20261123001300JobApplications', class: Migration20261123001300JobApplications },
  ],
};
