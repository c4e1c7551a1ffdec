import { IdempotentOutcome } from '../shared/idempotent-outcome.entity.js';
import { idempotentOutcomesMigration } from '../shared/idempotent-outcomes.migration.js';
import { Provider } from './provider/provider.entity.js';
import { UsageRecord } from './usage/usage-record.entity.js';
import { Migration20261122000300Providers } from './migrations/Migration20261122000300Providers.js';
import { Migration20261123000200UsageRecords } from './migrations/Migration20261123000200UsageRecords.js';
import { Migration20261123000500ConfiguredProviders } from './migrations/Migration20261123000500ConfiguredProviders.js';
import { Migration20261123000900UsageAnalytics } from './migrations/Migration20261123000900UsageAnalytics.js';
import { Migration20261123001000UsageHours } from './migrations/Migration20261123001000UsageHours.js';
import { UsageHour } from './analytics/usage-hour.entity.js';
import { UsageLatencyDay } from './analytics/usage-latency-day.entity.js';
import { UsageLatencyHour } from './analytics/usage-latency-hour.entity.js';
import { Migration20261123001100UsageLatencyHistograms } from './migrations/Migration20261123001100UsageLatencyHistograms.js';
import { Migration20261129000100StoredResponses } from './migrations/Migration20261129000100StoredResponses.js';
import { StoredResponse } from './responses/stored-response.entity.js';

/** The inference subgraph's ORM: its entities and migrations, in the `inference` schema. */
export const inferenceOrmOptions = {
  schema: 'inference',
  entities: [IdempotentOutcome, Provider, UsageRecord, UsageHour, UsageLatencyHour, UsageLatencyDay, StoredResponse],
  migrations: [
    { name: 'Migration20261122000300Providers', class: Migration20261122000300Providers },
    { name: 'Migration20261123000200UsageRecords', class: Migration20261123000200UsageRecords },
    { name: 'Migration20261123000500ConfiguredProviders', class: Migration20261123000500ConfiguredProviders },
    { name: 'Migration20261123000900UsageAnalytics', class: Migration20261123000900UsageAnalytics },
    { name: 'Migration20261123001000UsageHours', class: Migration20261123001000UsageHours },
    { name: 'Migration20261123001100UsageLatencyHistograms', class: Migration20261123001100UsageLatencyHistograms },
    { name: 'Migration20261129000100StoredResponses', class: Migration20261129000100StoredResponses },
    idempotentOutcomesMigration('inference'),
  ],
};
