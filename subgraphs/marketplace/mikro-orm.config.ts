import { JobPosting } from './job/job-posting.entity.js';
import { Migration20261122000200JobPostings } from './migrations/Migration20261122000200JobPostings.js';

/** The marketplace subgraph's ORM: its entities and migrations, in the `marketplace` schema. */
export const marketplaceOrmOptions = {
  schema: 'marketplace',
  entities: [JobPosting],
  migrations: [{ name: 'Migration20261122000200JobPostings', class: Migration20261122000200JobPostings }],
};
