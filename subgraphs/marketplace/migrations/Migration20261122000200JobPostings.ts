import { Migration } from '@mikro-orm/migrations';

/** Job postings, scoped by account and mode; the poster is a Member id of the membership subgraph. */
export class Migration20261122000200JobPostings extends Migration {
  override up(): void {
    this.addSql(`create table "marketplace"."job_posting" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "title" varchar(200) not null, "description" text not null, "location" varchar(200) null, "posted_by_id" uuid not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "job_posting_scope_created_index" on "marketplace"."job_posting" ("account_id", "mode", "created_at", "id");`);
  }
}
