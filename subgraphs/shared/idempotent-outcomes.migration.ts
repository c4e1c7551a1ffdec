import type { MigrationObject } from '@mikro-orm/core';
import { Migration } from '@mikro-orm/migrations';

/** The name every subgraph's migration list gives the idempotent_outcome table's migration. */
export const IDEMPOTENT_OUTCOMES_MIGRATION = 'Migration20261128160000IdempotentOutcomes';

/** The idempotent_outcome table (idempotent-outcome.entity.ts) in `schema`, for that subgraph's migration list. */
export function idempotentOutcomesMigration(schema: string): MigrationObject {
  class IdempotentOutcomes extends Migration {
    override up(): void {
      this.addSql(`create table "${schema}"."idempotent_outcome" ("id" uuid not null, "account_id" varchar(64) not null, "mode" varchar(8) not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "response" jsonb null, "created_at" timestamptz not null, primary key ("id"));`);
      this.addSql(`create index "idempotent_outcome_created_at_index" on "${schema}"."idempotent_outcome" ("created_at");`);
      this.addSql(`alter table "${schema}"."idempotent_outcome" add constraint "idempotent_outcome_account_id_mode_key_fingerprint_unique" unique ("account_id", "mode", "key", "fingerprint");`);
    }
  }
  return { name: IDEMPOTENT_OUTCOMES_MIGRATION, class: IdempotentOutcomes };
}
