import { Trace } from './trace/trace.entity.js';
import { Migration20261122000400Traces } from './migrations/Migration20261122000400Traces.js';

/** The traceroute subgraph's ORM: its entities and migrations, in the `traceroute` schema. */
export const tracerouteOrmOptions = {
  schema: 'traceroute',
  entities: [Trace],
  migrations: [{ name: 'Migration20261122000400Traces', class: Migration20261122000400Traces }],
};
