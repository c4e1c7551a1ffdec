import { Migration } from '@mikro-orm/migrations';

/** Idempotency-Key records: the first response to a POST, kept 24 hours per account and mode. */
export class Migration20261122020000Idempotency extends Migration {
  override up(): void {
    this.addSql(`create table "identity"."idempotency_record" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(8) not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "state" varchar(16) not null, "response_status" int null, "response_content_type" varchar(255) null, "response_body" bytea null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "idempotency_record_created_at_index" on "identity"."idempotency_record" ("created_at");`);
    this.addSql(`alter table "identity"."idempotency_record" add constraint "idempotency_record_account_id_mode_key_unique" unique ("account_id", "mode", "key");`);
    this.addSql(`alter table "identity"."idempotency_record" add constraint "idempotency_record_account_id_foreign" foreign key ("account_id") references "identity"."account" ("id") on delete cascade;`);
  }
}
