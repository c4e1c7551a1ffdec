import { Migration } from '@mikro-orm/migrations';

/** The marketplace's webhook outbox: events raised with their change, relayed to the membership subgraph's endpoints. */
export class Migration20261201000600WebhookEvents extends Migration {
  override up(): void {
    this.addSql(`create table "marketplace"."webhook_event" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "event_id" varchar(40) not null, "type" varchar(40) not null, "data" jsonb not null, "occurred_at" timestamptz not null, "relayed_at" timestamptz null, "attempts" int not null default 0, "next_attempt_at" timestamptz not null, "last_error" varchar(500) null, constraint "webhook_event_pkey" primary key ("id"));`);
    this.addSql(`alter table "marketplace"."webhook_event" add constraint "webhook_event_event_id_unique" unique ("event_id");`);
    this.addSql(`create index "webhook_event_due_index" on "marketplace"."webhook_event" ("next_attempt_at") where "relayed_at" is null;`);
  }
}
