import { Member } from './member/member.entity.js';
import { Migration20261122000100Members } from './migrations/Migration20261122000100Members.js';

/** The membership subgraph's ORM: its entities and migrations, in the `membership` schema. */
export const membershipOrmOptions = {
  schema: 'membership',
  entities: [Member],
  migrations: [{ name: 'Migration20261122000100Members', class: Migration20261122000100Members }],
};
