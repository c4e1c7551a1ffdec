import { Migration } from '@mikro-orm/migrations';

/** Events and their attendees (registrations, waitlist, check-in), scoped by account and mode. */
export class Migration20261122033000Events extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."event" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "title" varchar(200) not null, "description" text null, "starts_at" timestamptz not null, "ends_at" timestamptz not null, "time_zone" varchar(64) not null, "location" varchar(500) null, "capacity" int null, "registration_opens_at" timestamptz null, "registration_closes_at" timestamptz not null, "price" int not null default 0, "currency" varchar(3) null, "cancelled_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "event_scope_created_index" on "membership"."event" ("account_id", "mode", "created_at", "id");`);
    this.addSql(`create table "membership"."event_attendee" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "event_id" uuid not null, "member_id" uuid null, "name" varchar(200) not null, "email" varchar(320) not null, "status" varchar(12) not null, "waitlist_number" int null, "code_hash" varchar(64) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "promoted_at" timestamptz null, "checked_in_at" timestamptz null, "cancelled_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create unique index "event_attendee_code_unique" on "membership"."event_attendee" ("event_id", "code_hash");`);
    this.addSql(`create unique index "event_attendee_member_unique" on "membership"."event_attendee" ("event_id", "member_id") where "status" <> 'cancelled';`);
    this.addSql(`create unique index "event_attendee_email_unique" on "membership"."event_attendee" ("event_id", "email") where "status" <> 'cancelled';`);
    this.addSql(`create index "event_attendee_waitlist_index" on "membership"."event_attendee" ("event_id", "waitlist_number") where "status" = 'waitlisted';`);
    this.addSql(`create index "event_attendee_event_created_index" on "membership"."event_attendee" ("event_id", "created_at", "id");`);
    this.addSql(`alter table "membership"."event_attendee" add constraint "event_attendee_event_id_foreign" foreign key ("event_id") references "membership"."event" ("id") on delete cascade;`);
    this.addSql(`alter table "membership"."event_attendee" add constraint "event_attendee_member_id_foreign" foreign key ("member_id") references "membership"."member" ("id") on delete set null;`);
  }
}
