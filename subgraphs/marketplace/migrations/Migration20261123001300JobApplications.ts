import { Migration } from '@mikro-orm/migrations';

/** Applications to job postings; one active application per candidate and posting. */
export class Migration20261123001300JobApplications extends Migration {
  override up(): void {
    this.addSql(`create table "marketplace"."job_application" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "job_posting_id" uuid not null, "member_id" uuid null, "candidate_name" varchar(200) null, "candidate_email" varchar(320) null, "candidate_key" varchar(320) not null, "cover_letter" text null, "answers" jsonb not null, "resume_document_id" uuid null, "resume_text" text null, "skills" text[] not null, "status" varchar(10) not null default 'active', "stage" varchar(10) not null default 'applied', "rejection_reason" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "job_application_posting_index" on "marketplace"."job_application" ("account_id", "mode", "job_posting_id", "created_at", "id");`);
    this.addSql(`create unique index "job_application_active_candidate_unique" on "marketplace"."job_application" ("account_id", "mode", "job_posting_id", "candidate_key") where "status" = 'active';`);
  }
}
