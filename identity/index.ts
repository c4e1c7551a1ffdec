import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { migrate, openOrm } from '../core/orm.js';
import { Account } from './account.entity.js';
import { ApiKey } from './api-key.entity.js';
import { IdempotencyRecord } from './idempotency-record.entity.js';
import { AccountUser } from './account-user.entity.js';
import { DashboardSession } from './dashboard-session.entity.js';
import { DashboardInvitation } from './dashboard-invitation.entity.js';
import { UsageMinute } from './usage-minute.entity.js';
import { InternalNonce } from './internal-nonce.entity.js';
import { Migration20261122000000Identity } from './migrations/Migration20261122000000Identity.js';
import { Migration20261122010000KeyLimits } from './migrations/Migration20261122010000KeyLimits.js';
import { Migration20261122020000Idempotency } from './migrations/Migration20261122020000Idempotency.js';
import { Migration20261123000000KeyPlans } from './migrations/Migration20261123000000KeyPlans.js';
import { Migration20261123005000KeyChanges } from './migrations/Migration20261123005000KeyChanges.js';
import { Migration20261123100000Dashboard } from './migrations/Migration20261123100000Dashboard.js';
import { Migration20261123110000KeyLastUsed } from './migrations/Migration20261123110000KeyLastUsed.js';
import { Migration20261124000000InternalNonces } from './migrations/Migration20261124000000InternalNonces.js';
import { Migration20261128160000IdempotencyOwners } from './migrations/Migration20261128160000IdempotencyOwners.js';

export const IDENTITY_SCHEMA = 'identity';

export const identityOrmOptions = {
  schema: IDENTITY_SCHEMA,
  entities: [Account, ApiKey, IdempotencyRecord, AccountUser, DashboardSession, DashboardInvitation, UsageMinute, InternalNonce],
  migrations: [
    { name: 'Migration20261122000000Identity', class: Migration20261122000000Identity },
    { name: 'Migration20261122010000KeyLimits', class: Migration20261122010000KeyLimits },
    { name: 'Migration20261122020000Idempotency', class: Migration20261122020000Idempotency },
    { name: 'Migration20261123000000KeyPlans', class: Migration20261123000000KeyPlans },
    { name: 'Migration20261123005000KeyChanges', class: Migration20261123005000KeyChanges },
    { name: 'Migration20261123100000Dashboard', class: Migration20261123100000Dashboard },
    { name: 'Migration20261123110000KeyLastUsed', class: Migration20261123110000KeyLastUsed },
    { name: 'Migration20261124000000InternalNonces', class: Migration20261124000000InternalNonces },
    { name: 'Migration20261128160000IdempotencyOwners', class: Migration20261128160000IdempotencyOwners },
  ],
};

/** Opens (and migrates) the edge's key store: accounts and API keys in the `identity` schema. */
export async function openIdentityStore(clientUrl: string, logger?: Logger, poolMax = 5): Promise<MikroORM> {
  const orm = await openOrm({ clientUrl, logger, poolMax, ...identityOrmOptions });
  await migrate(orm, clientUrl, IDENTITY_SCHEMA);
  return orm;
}
