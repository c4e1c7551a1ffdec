import { Migration } from '@mikro-orm/migrations';

/** The marketplace's audit trail of state changes (postings, applications, tenders, bids). */
export class Migration20261123001000MarketplaceAudit extends Migration {
  override up(): void {
    this.addSql(`create table "marketplace"."marketplace_audit" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "actor" varchar(100) not null, "subject_type" varchar(32) not null, "subject_id" uuid not null, "from" varchar(64) null, "to" varchar(64) not null, "reason" text null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "marketplace_audit_subject_index" on "marketplace"."marketplace_audit" ("account_id", "mode", "subject_type", "subject_id", "created_at", "id");`);
  }
}
