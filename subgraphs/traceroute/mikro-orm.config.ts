import { IdempotentOutcome } from '../shared/idempotent-outcome.entity.js';
import { idempotentOutcomesMigration } from '../shared/idempotent-outcomes.migration.js';
import { PathBaseline } from './baseline/path-baseline.entity.js';
import { Migration20261122000400Traces } from './migrations/Migration20261122000400Traces.js';
import { Migration20261122000600TraceStore } from './migrations/Migration20261122000600TraceStore.js';
import { Migration20261123000100FailedBeforeAnyHop } from './migrations/Migration20261123000100FailedBeforeAnyHop.js';
import { Migration20261128000100StopReason } from './migrations/Migration20261128000100StopReason.js';
import { Migration20261129000100SearchFilters } from './migrations/Migration20261129000100SearchFilters.js';
import { Migration20261129000200SourceRecord } from './migrations/Migration20261129000200SourceRecord.js';
import { Migration20261129000300Provenance } from './migrations/Migration20261129000300Provenance.js';
import { Trace } from './trace/trace.entity.js';

/** The traceroute subgraph's ORM: its entities and migrations, in the `traceroute` schema. */
export const tracerouteOrmOptions = {
  schema: 'traceroute',
  entities: [IdempotentOutcome, Trace, PathBaseline],
  migrations: [
    { name: 'Migration20261122000400Traces', class: Migration20261122000400Traces },
    { name: 'Migration20261122000600TraceStore', class: Migration20261122000600TraceStore },
    { name: 'Migration20261123000100FailedBeforeAnyHop', class: Migration20261123000100FailedBeforeAnyHop },
    { name: 'Migration20261128000100StopReason', class: Migration20261128000100StopReason },
    { name: 'Migration20261129000100SearchFilters', class: Migration20261129000100SearchFilters },
    { name: 'Migration20261129000200SourceRecord', class: Migration20261129000200SourceRecord },
    { name: 'Migration20261129000300Provenance', class: Migration20261129000300Provenance },
    idempotentOutcomesMigration('traceroute'),
  ],
};
