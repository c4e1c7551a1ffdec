import { Migration } from '@mikro-orm/migrations';

/**
 * Member categories, and the member's profile, category and lifecycle columns. Existing members
 * have no category (free, yearly, no grace days): they stay current and their grace ends with
 * their period.
 */
export class Migration20261122030000Categories extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."member_category" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "name" varchar(200) not null, "fee_amount" int not null, "currency" varchar(3) not null, "period" varchar(16) not null, "period_years" int null, "renewal_basis" varchar(8) not null, "fixed_month" smallint null, "fixed_day" smallint null, "grace_days" int not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "member_category_scope_created_index" on "membership"."member_category" ("account_id", "mode", "created_at", "id");`);
    this.addSql(`alter table "membership"."member_category" add constraint "member_category_scope_name_unique" unique ("account_id", "mode", "name");`);

    this.addSql(`alter table "membership"."member" add column "address_line1" varchar(200) null, add column "address_line2" varchar(200) null, add column "city" varchar(100) null, add column "region" varchar(100) null, add column "postal_code" varchar(20) null, add column "country" varchar(2) null, add column "custom_fields" jsonb null, add column "category_id" uuid null, add column "state" varchar(10) not null default 'current', add column "grace_ends_on" date null;`);
    this.addSql(`alter table "membership"."member" alter column "period_end" drop not null;`);
    this.addSql(`update "membership"."member" set "grace_ends_on" = "period_end";`);
    this.addSql(`create index "member_scope_category_index" on "membership"."member" ("account_id", "mode", "category_id", "created_at");`);
    this.addSql(`create index "member_scope_period_end_index" on "membership"."member" ("account_id", "mode", "period_end");`);
  }
}
