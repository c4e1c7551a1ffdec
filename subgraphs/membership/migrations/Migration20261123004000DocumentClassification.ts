import { Migration } from '@mikro-orm/migrations';

/**
 * Document categories per account and mode with their matching rules, the per-scope state (seeded
 * defaults, the version that a category or rule change bumps) and the trained classifier.
 */
export class Migration20261123004000DocumentClassification extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."document_category" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "name" varchar(100) not null, "normalized_name" varchar(100) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "document_category_scope_index" on "membership"."document_category" ("account_id", "mode", "created_at");`);
    this.addSql(`alter table "membership"."document_category" add constraint "document_category_scope_name_unique" unique ("account_id", "mode", "normalized_name");`);
    this.addSql(`create table "membership"."document_category_rule" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "category_id" uuid not null, "position" smallint not null, "kind" varchar(5) not null, "pattern" varchar(500) not null, "case_sensitive" boolean not null default false, "threshold" real null, primary key ("id"));`);
    this.addSql(`alter table "membership"."document_category_rule" add constraint "document_category_rule_category_id_foreign" foreign key ("category_id") references "membership"."document_category" ("id") on delete cascade;`);
    this.addSql(`create index "document_category_rule_category_id_index" on "membership"."document_category_rule" ("category_id");`);
    this.addSql(`create table "membership"."document_category_state" ("account_id" uuid not null, "mode" varchar(4) not null, "version" int not null, "seeded_at" timestamptz not null, primary key ("account_id", "mode"));`);
    this.addSql(`create table "membership"."document_classifier_model" ("account_id" uuid not null, "mode" varchar(4) not null, "model" text not null, "labels" jsonb not null, "accuracy" real null, "trained_on" int not null, "held_out" int not null, "trained_at" timestamptz not null, primary key ("account_id", "mode"));`);
  }
}
