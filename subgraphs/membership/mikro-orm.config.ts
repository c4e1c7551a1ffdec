import { Member } from './member/member.entity.js';
import { Event } from './event/event.entity.js';
import { Attendee } from './event/attendee.entity.js';
import { Migration20261122000100Members } from './migrations/Migration20261122000100Members.js';
import { Migration20261122033000Events } from './migrations/Migration20261122033000Events.js';

/** The membership subgraph's ORM: its entities and migrations, in the `membership` schema. */
export const membershipOrmOptions = {
  schema: 'membership',
  entities: [Member, Event, Attendee],
  migrations: [
    { name: 'Migration20261122000100Members', class: Migration20261122000100Members },
    { name: 'Migration20261122033000Events', class: Migration20261122033000Events },
  ],
};
