import { Migration } from '@mikro-orm/migrations';

/** Tenders, vendors, sealed bids with their receipts, and awards. */
export class Migration20261123002000Tenders extends Migration {
  override up(): void {
    this.addSql(`create table "marketplace"."vendor" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "name" varchar(200) not null, "country" varchar(2) not null, "registration_number" varchar(64) not null, "contact_email" varchar(254) not null, "categories" jsonb not null, "status" varchar(16) not null default 'pending', "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "marketplace"."vendor" add constraint "vendor_account_mode_unique" unique ("account_id", "mode");`);
    this.addSql(`alter table "marketplace"."vendor" add constraint "vendor_status_check" check (status in ('pending', 'approved', 'suspended'));`);
    this.addSql(`create index "vendor_mode_created_index" on "marketplace"."vendor" ("mode", "created_at", "id");`);

    this.addSql(`create table "marketplace"."tender" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "title" varchar(200) not null, "description" text not null, "value_amount" numeric(18,2) not null, "currency" varchar(3) not null, "procurement_method" varchar(16) not null, "award_criteria" varchar(16) not null, "price_weight" smallint null, "quality_weight" smallint null, "lots" jsonb not null, "tender_period_start" timestamptz not null, "tender_period_end" timestamptz not null, "award_period_start" timestamptz null, "award_period_end" timestamptz null, "document_ids" jsonb not null, "invited_vendor_ids" jsonb not null, "status" varchar(16) not null default 'draft', "terms_version" int not null default 1, "cancellation_reason" text null, "created_by" varchar(100) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "marketplace"."tender" add constraint "tender_status_check" check (status in ('draft', 'active', 'evaluation', 'awarded', 'complete', 'cancelled', 'unsuccessful'));`);
    this.addSql(`alter table "marketplace"."tender" add constraint "tender_value_check" check (value_amount > 0);`);
    this.addSql(`create index "tender_mode_created_index" on "marketplace"."tender" ("mode", "created_at", "id");`);
    // The settling of expired active tenders looks them up by their deadline.
    this.addSql(`create index "tender_active_end_index" on "marketplace"."tender" ("mode", "tender_period_end") where "status" = 'active';`);

    this.addSql(`create table "marketplace"."bid" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "tender_id" uuid not null, "lot_id" uuid null, "vendor_id" uuid not null, "amount" numeric(18,2) not null, "currency" varchar(3) not null, "documents" jsonb not null, "quality_answers" jsonb not null, "status" varchar(16) not null default 'active', "terms_version" int not null, "version" int not null default 1, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "marketplace"."bid" add constraint "bid_status_check" check (status in ('active', 'invalid', 'withdrawn', 'awarded', 'unsuccessful'));`);
    this.addSql(`alter table "marketplace"."bid" add constraint "bid_amount_check" check (amount > 0);`);
    this.addSql(`create index "bid_tender_created_index" on "marketplace"."bid" ("tender_id", "created_at", "id");`);
    this.addSql(`create index "bid_vendor_index" on "marketplace"."bid" ("vendor_id", "tender_id");`);
    // One bid per vendor and lot: the database holds the rule even between concurrent placements.
    this.addSql(`create unique index "bid_one_per_vendor_lot" on "marketplace"."bid" ("tender_id", "vendor_id", coalesce("lot_id", '00000000-0000-0000-0000-000000000000'::uuid)) where "status" <> 'withdrawn';`);

    this.addSql(`create table "marketplace"."bid_receipt" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "bid_id" uuid not null, "version" int not null, "canonical" text not null, "sha256" varchar(64) not null, "recorded_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create unique index "bid_receipt_bid_index" on "marketplace"."bid_receipt" ("bid_id", "version");`);
    this.addSql(`create index "bid_receipt_sha256_index" on "marketplace"."bid_receipt" ("sha256");`);

    this.addSql(`create table "marketplace"."award" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "tender_id" uuid not null, "lot_id" uuid null, "bid_id" uuid not null, "vendor_id" uuid not null, "amount" numeric(18,2) not null, "currency" varchar(3) not null, "status" varchar(16) not null, "scores" jsonb not null, "cancellation_reason" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "marketplace"."award" add constraint "award_status_check" check (status in ('pending', 'active', 'cancelled'));`);
    this.addSql(`create index "award_tender_index" on "marketplace"."award" ("tender_id", "created_at");`);
    // One live award per lot.
    this.addSql(`create unique index "award_one_per_lot" on "marketplace"."award" ("tender_id", coalesce("lot_id", '00000000-0000-0000-0000-000000000000'::uuid)) where "status" <> 'cancelled';`);
  }
}
