import { Migration } from '@mikro-orm/migrations';

/** Accounts and their API keys. */
export class Migration20261122000000Identity extends Migration {
  override up(): void {
    this.addSql(`create table "identity"."account" ("id" uuid not null, "slug" varchar(64) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "identity"."account" add constraint "account_slug_unique" unique ("slug");`);
    this.addSql(`create table "identity"."api_key" ("id" varchar(40) not null, "account_id" uuid not null, "kind" varchar(16) not null, "name" varchar(120) null, "prefix" varchar(24) not null, "secret_hash" varchar(64) not null, "created_at" timestamptz not null, "disabled_at" timestamptz null, "expires_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "identity"."api_key" add constraint "api_key_secret_hash_unique" unique ("secret_hash");`);
    this.addSql(`create index "api_key_account_id_created_at_index" on "identity"."api_key" ("account_id", "created_at");`);
    this.addSql(`alter table "identity"."api_key" add constraint "api_key_account_id_foreign" foreign key ("account_id") references "identity"."account" ("id") on delete cascade;`);
  }
}
