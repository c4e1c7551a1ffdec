import { Migration } from '@mikro-orm/migrations';

/** Chat webhooks: endpoints, the delivery outbox, and the log of delivery attempts. */
export class Migration20261122041000Webhooks extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."chat_webhook" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "url" varchar(2048) not null, "event_types" text[] not null, "description" varchar(500) null, "secret" varchar(64) not null, "created_at" timestamptz not null, "disabled_at" timestamptz null, "disabled_reason" varchar(20) null, "failing_since" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "chat_webhook_scope_created_index" on "membership"."chat_webhook" ("account_id", "mode", "created_at", "id");`);
    this.addSql(`create table "membership"."chat_webhook_attempt" ("id" uuid not null, "delivery_id" uuid not null, "webhook_id" uuid not null, "attempt" int not null, "status_code" int null, "duration_ms" int not null, "error" varchar(500) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "chat_webhook_attempt_delivery_index" on "membership"."chat_webhook_attempt" ("delivery_id", "attempt");`);
    this.addSql(`create table "membership"."chat_webhook_delivery" ("id" uuid not null, "webhook_id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "event_id" varchar(40) not null, "event_type" varchar(40) not null, "payload" text not null, "status" varchar(9) not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz not null, "last_status_code" int null, "last_error" varchar(500) null, "created_at" timestamptz not null, "completed_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "chat_webhook_delivery_webhook_index" on "membership"."chat_webhook_delivery" ("webhook_id", "created_at", "id");`);
    this.addSql(`create index "chat_webhook_delivery_due_index" on "membership"."chat_webhook_delivery" ("status", "next_attempt_at");`);
  }
}
