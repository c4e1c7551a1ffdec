import { Migration } from '@mikro-orm/migrations';

/** Postings get a lifecycle, a closing date, skills, remote, employment type and a salary range. */
export class Migration20261123001200JobPostingLifecycle extends Migration {
  override up(): void {
    // Postings made before the lifecycle existed were public at once: they are open.
    this.addSql(`alter table "marketplace"."job_posting" add column "skills" text[] not null default '{}', add column "remote" boolean not null default false, add column "employment_type" varchar(16) null, add column "salary_min" int null, add column "salary_max" int null, add column "salary_currency" varchar(3) null, add column "closes_at" timestamptz null, add column "state" varchar(8) not null default 'open', add column "updated_at" timestamptz not null default now();`);
    this.addSql(`alter table "marketplace"."job_posting" alter column "skills" drop default, alter column "updated_at" drop default;`);
    this.addSql(`create index "job_posting_skills_index" on "marketplace"."job_posting" using gin ("skills");`);
    this.addSql(`create index "job_posting_search_index" on "marketplace"."job_posting" using gin (to_tsvector('english', "title" || ' ' || "description"));`);
  }
}
