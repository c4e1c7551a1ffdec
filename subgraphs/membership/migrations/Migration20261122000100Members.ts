import { Migration } from '@mikro-orm/migrations';

/** Members, scoped by account and mode. */
export class Migration20261122000100Members extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."member" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "name" varchar(200) not null, "email" varchar(320) not null, "phone" varchar(40) null, "joined_on" date not null, "period_start" date not null, "period_end" date not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create unique index "member_scope_email_unique" on "membership"."member" ("account_id", "mode", "email") where "deleted_at" is null;`);
    this.addSql(`create index "member_scope_created_index" on "membership"."member" ("account_id", "mode", "created_at", "id");`);
  }
}
