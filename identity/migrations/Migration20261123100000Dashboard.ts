import { Migration } from '@mikro-orm/migrations';

/** The dashboard: account users, their sessions, invitations, and the edge's per-minute usage counts. */
export class Migration20261123100000Dashboard extends Migration {
  override up(): void {
    this.addSql(`create table "identity"."account_user" ("id" uuid not null, "account_id" uuid not null, "email" varchar(254) not null, "name" varchar(120) not null, "password_hash" varchar(255) not null, "role" varchar(16) not null, "platform_admin" boolean not null default false, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "identity"."account_user" add constraint "account_user_email_unique" unique ("email");`);
    this.addSql(`alter table "identity"."account_user" add constraint "account_user_account_id_foreign" foreign key ("account_id") references "identity"."account" ("id") on delete cascade;`);

    this.addSql(`create table "identity"."dashboard_session" ("id" varchar(64) not null, "user_id" uuid not null, "csrf_token" varchar(64) not null, "created_at" timestamptz not null, "last_seen_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "dashboard_session_user_id_index" on "identity"."dashboard_session" ("user_id");`);
    this.addSql(`create index "dashboard_session_expires_at_index" on "identity"."dashboard_session" ("expires_at");`);
    this.addSql(`alter table "identity"."dashboard_session" add constraint "dashboard_session_user_id_foreign" foreign key ("user_id") references "identity"."account_user" ("id") on delete cascade;`);

    this.addSql(`create table "identity"."dashboard_invitation" ("id" uuid not null, "account_id" uuid not null, "email" varchar(254) not null, "role" varchar(16) not null, "token_hash" varchar(64) not null, "inviter_id" uuid null, "created_at" timestamptz not null, "expires_at" timestamptz not null, "accepted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "identity"."dashboard_invitation" add constraint "dashboard_invitation_token_hash_unique" unique ("token_hash");`);
    this.addSql(`alter table "identity"."dashboard_invitation" add constraint "dashboard_invitation_account_id_foreign" foreign key ("account_id") references "identity"."account" ("id") on delete cascade;`);
    this.addSql(`alter table "identity"."dashboard_invitation" add constraint "dashboard_invitation_inviter_id_foreign" foreign key ("inviter_id") references "identity"."account_user" ("id") on delete set null;`);

    this.addSql(`create table "identity"."usage_minute" ("account_id" uuid not null, "mode" varchar(8) not null, "minute" timestamptz not null, "method" varchar(8) not null, "path" varchar(200) not null, "status" smallint not null, "count" int not null, "total_ms" double precision not null, "max_ms" double precision not null, primary key ("account_id", "mode", "minute", "method", "path", "status"));`);
    this.addSql(`create index "usage_minute_minute_index" on "identity"."usage_minute" ("minute");`);
  }
}
