import { Migration } from '@mikro-orm/migrations';

/** A member's headline and normalised skills, for job matching; indexed for the ranking's prefilter. */
export class Migration20261123001100MemberSkills extends Migration {
  override up(): void {
    this.addSql(`alter table "membership"."member" add column "headline" varchar(200) null, add column "skills" text[] not null default '{}';`);
    // The default only fills existing rows; the application always writes the list.
    this.addSql(`alter table "membership"."member" alter column "skills" drop default;`);
    this.addSql(`create index "member_skills_index" on "membership"."member" using gin ("skills");`);
    this.addSql(`create index "member_headline_search_index" on "membership"."member" using gin (to_tsvector('english', coalesce("headline", '')));`);
  }
}
