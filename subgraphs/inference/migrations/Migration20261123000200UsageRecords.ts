import { Migration } from '@mikro-orm/migrations';

/**
 * Usage records: one narrow row per inference call on any interface, range-partitioned by month
 * of `occurred_at` like traceroute's traces (raw SQL: MikroORM leaves partitioning the entity does
 * not declare alone). Each index on the parent is created on every partition. The recorder
 * creates a month's partition before it writes the month's first rows (usage-partitions.ts); the
 * default partition catches the rest. The indexes are ascending: the lists read them backwards.
 */
export class Migration20261123000200UsageRecords extends Migration {
  override up(): void {
    this.addSql(`create table "inference"."usage_record" ("id" uuid not null, "occurred_at" timestamptz(3) not null, "account_id" uuid null, "prompt_tokens" int not null, "completion_tokens" int not null, "latency_ms" int not null, "time_to_first_token_ms" int null, "status" smallint not null, "streamed" boolean not null, "interface" text not null, "provider" varchar(64) not null, "model" varchar(200) not null, "key_id" varchar(40) null, "client_address" varchar(45) null, "error_code" varchar(64) null, primary key ("id", "occurred_at")) partition by range ("occurred_at");`);
    this.addSql(`create index "usage_record_order_index" on "inference"."usage_record" ("occurred_at", "id");`);
    this.addSql(`create index "usage_record_account_index" on "inference"."usage_record" ("account_id", "occurred_at", "id");`);
    this.addSql(`create index "usage_record_key_index" on "inference"."usage_record" ("key_id", "occurred_at", "id");`);
    this.addSql(`create index "usage_record_provider_model_index" on "inference"."usage_record" ("provider", "model", "occurred_at", "id");`);
    this.addSql(`alter table "inference"."usage_record" add constraint "usage_record_interface_check" check ("interface" in ('service_t', 'service_i', 'proxy', 'gateway', 'graphql'));`);
    this.addSql(`create table "inference"."usage_record_default" partition of "inference"."usage_record" default;`);
  }
}
