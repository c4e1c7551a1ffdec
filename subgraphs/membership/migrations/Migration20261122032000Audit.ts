import { Migration } from '@mikro-orm/migrations';

/** The audit trail: one row per change, inserted in the change's own transaction. */
export class Migration20261122032000Audit extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."audit_event" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "key_id" varchar(100) not null, "entity" varchar(32) not null, "entity_id" uuid not null, "action" varchar(64) not null, "before" jsonb null, "after" jsonb null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "audit_event_entity_index" on "membership"."audit_event" ("account_id", "mode", "entity_id", "created_at", "id");`);
    this.addSql(`create index "audit_event_scope_created_index" on "membership"."audit_event" ("account_id", "mode", "created_at", "id");`);
  }
}
