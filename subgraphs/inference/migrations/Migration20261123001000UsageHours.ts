import { Migration } from '@mikro-orm/migrations';

/**
 * Hourly sums of the usage records (analytics/usage-hour.entity.ts). A statement-level trigger
 * with a transition table on the partitioned parent sees every batch the recorder inserts, in
 * whichever partitions its rows land, and adds the batch's sums in one upsert; records already
 * stored are summed once here. `date_bin` on a UTC origin cuts whole hours without a time zone
 * lookup per row.
 */
export class Migration20261123001000UsageHours extends Migration {
  override up(): void {
    this.addSql(`create table "inference"."usage_hour" ("hour" timestamptz not null, "provider" varchar(64) not null, "model" varchar(200) not null, "interface" text not null, "calls" bigint not null, "errors" bigint not null, "prompt_tokens" bigint not null, "completion_tokens" bigint not null, primary key ("hour", "provider", "model", "interface"));`);
    this.addSql(`create function "inference"."usage_hour_add"() returns trigger language plpgsql as $$
begin
  insert into "inference"."usage_hour" as h ("hour", "provider", "model", "interface", "calls", "errors", "prompt_tokens", "completion_tokens")
  select date_bin('1 hour', a."occurred_at", timestamptz '2000-01-01 00:00:00+00'), a."provider", a."model", a."interface",
    count(*), count(*) filter (where a."status" >= 400), sum(a."prompt_tokens"), sum(a."completion_tokens")
  from "added" a group by 1, 2, 3, 4
  -- The order of the keys, so that two batches upserting the same hours lock them in one order.
  order by 1, 2, 3, 4
  on conflict ("hour", "provider", "model", "interface") do update set
    "calls" = h."calls" + excluded."calls", "errors" = h."errors" + excluded."errors",
    "prompt_tokens" = h."prompt_tokens" + excluded."prompt_tokens", "completion_tokens" = h."completion_tokens" + excluded."completion_tokens";
  return null;
end $$;`);
    this.addSql(`create trigger "usage_hour_add" after insert on "inference"."usage_record" referencing new table as "added" for each statement execute function "inference"."usage_hour_add"();`);
    this.addSql(`insert into "inference"."usage_hour" ("hour", "provider", "model", "interface", "calls", "errors", "prompt_tokens", "completion_tokens")
  select date_bin('1 hour', "occurred_at", timestamptz '2000-01-01 00:00:00+00'), "provider", "model", "interface",
    count(*), count(*) filter (where "status" >= 400), sum("prompt_tokens"), sum("completion_tokens")
  from "inference"."usage_record" group by 1, 2, 3, 4;`);
  }
}
