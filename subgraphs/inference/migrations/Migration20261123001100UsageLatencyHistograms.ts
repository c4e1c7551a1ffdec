import { Migration } from '@mikro-orm/migrations';

const ORIGIN = `timestamptz '2000-01-01 00:00:00+00'`;
// Bucket 0 holds 0 ms; bucket k >= 1 holds [1.02^(k-1), 1.02^k) ms (analytics/latency-histogram.ts).
// Inline rather than a SQL function: the schema diff would drop a function no entity declares.
const bucket = (column: string) => `case when ${column} < 1 then 0 else (1 + floor(ln(${column}::float8) / ln(1.02)))::smallint end`;

/**
 * Latency histograms beside the hourly sums, so that model performance over every call stays
 * fast at millions of records (analytics/latency-histogram.ts): the successful calls' latency and
 * time to first token counted per log bucket (2% wide), per UTC hour and per UTC day, provider and
 * model. The statement trigger that keeps `usage_hour` keeps them too, in the same upsert order.
 * `usage_hour` gains what performance sums (server errors, the tokens and milliseconds of
 * successful generations) and the images of image calls; `usage_record` gains `images`.
 */
export class Migration20261123001100UsageLatencyHistograms extends Migration {
  override up(): void {
    this.addSql(`alter table "inference"."usage_record" add column "images" smallint not null default 0;`);
    this.addSql(`alter table "inference"."usage_hour" add column "server_errors" bigint not null default 0, add column "generation_tokens" bigint not null default 0, add column "generation_ms" bigint not null default 0, add column "images" bigint not null default 0;`);
    // The defaults only fill the rows already there: the trigger always gives every column.
    this.addSql(`alter table "inference"."usage_hour" alter column "server_errors" drop default, alter column "generation_tokens" drop default, alter column "generation_ms" drop default, alter column "images" drop default;`);
    for (const [table, unit] of [['usage_latency_hour', 'hour'], ['usage_latency_day', 'day']] as const) {
      this.addSql(`create table "inference"."${table}" ("${unit}" timestamptz not null, "provider" varchar(64) not null, "model" varchar(200) not null, "metric" smallint not null, "bucket" smallint not null, "calls" bigint not null, primary key ("${unit}", "provider", "model", "metric", "bucket"));`);
      this.addSql(`create index "${table}_provider_model_index" on "inference"."${table}" ("provider", "model", "${unit}");`);
    }
    this.addSql(`create or replace function "inference"."usage_hour_add"() returns trigger language plpgsql as $$
begin
  insert into "inference"."usage_hour" as h ("hour", "provider", "model", "interface", "calls", "errors", "prompt_tokens", "completion_tokens", "server_errors", "generation_tokens", "generation_ms", "images")
  select date_bin('1 hour', a."occurred_at", ${ORIGIN}), a."provider", a."model", a."interface",
    count(*), count(*) filter (where a."status" >= 400), sum(a."prompt_tokens"), sum(a."completion_tokens"),
    count(*) filter (where a."status" >= 500),
    coalesce(sum(a."completion_tokens") filter (where a."status" < 400 and a."completion_tokens" > 0), 0),
    coalesce(sum(a."latency_ms") filter (where a."status" < 400 and a."completion_tokens" > 0), 0),
    sum(a."images")
  from "added" a group by 1, 2, 3, 4
  -- The order of the keys, so that two batches upserting the same hours lock them in one order.
  order by 1, 2, 3, 4
  on conflict ("hour", "provider", "model", "interface") do update set
    "calls" = h."calls" + excluded."calls", "errors" = h."errors" + excluded."errors",
    "prompt_tokens" = h."prompt_tokens" + excluded."prompt_tokens", "completion_tokens" = h."completion_tokens" + excluded."completion_tokens",
    "server_errors" = h."server_errors" + excluded."server_errors", "generation_tokens" = h."generation_tokens" + excluded."generation_tokens",
    "generation_ms" = h."generation_ms" + excluded."generation_ms", "images" = h."images" + excluded."images";
  insert into "inference"."usage_latency_hour" as l ("hour", "provider", "model", "metric", "bucket", "calls")
  select date_bin('1 hour', a."occurred_at", ${ORIGIN}), a."provider", a."model", m.metric, m.bucket, count(*)
  from "added" a cross join lateral (values (0::smallint, ${bucket('a."latency_ms"')}), (1::smallint, ${bucket('a."time_to_first_token_ms"')})) as m(metric, bucket)
  where a."status" < 400 and m.bucket is not null
  group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
  on conflict ("hour", "provider", "model", "metric", "bucket") do update set "calls" = l."calls" + excluded."calls";
  insert into "inference"."usage_latency_day" as l ("day", "provider", "model", "metric", "bucket", "calls")
  select date_bin('1 day', a."occurred_at", ${ORIGIN}), a."provider", a."model", m.metric, m.bucket, count(*)
  from "added" a cross join lateral (values (0::smallint, ${bucket('a."latency_ms"')}), (1::smallint, ${bucket('a."time_to_first_token_ms"')})) as m(metric, bucket)
  where a."status" < 400 and m.bucket is not null
  group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
  on conflict ("day", "provider", "model", "metric", "bucket") do update set "calls" = l."calls" + excluded."calls";
  return null;
end $$;`);
    // Records stored before: the new sums of their hours, and their histograms.
    this.addSql(`update "inference"."usage_hour" h set "server_errors" = s.server_errors, "generation_tokens" = s.generation_tokens, "generation_ms" = s.generation_ms
  from (
    select date_bin('1 hour', "occurred_at", ${ORIGIN}) as hour, "provider", "model", "interface",
      count(*) filter (where "status" >= 500) as server_errors,
      coalesce(sum("completion_tokens") filter (where "status" < 400 and "completion_tokens" > 0), 0) as generation_tokens,
      coalesce(sum("latency_ms") filter (where "status" < 400 and "completion_tokens" > 0), 0) as generation_ms
    from "inference"."usage_record" group by 1, 2, 3, 4
  ) s
  where h."hour" = s.hour and h."provider" = s."provider" and h."model" = s."model" and h."interface" = s."interface";`);
    for (const [table, unit] of [['usage_latency_hour', 'hour'], ['usage_latency_day', 'day']] as const) {
      this.addSql(`insert into "inference"."${table}" ("${unit}", "provider", "model", "metric", "bucket", "calls")
  select date_bin('1 ${unit}', r."occurred_at", ${ORIGIN}), r."provider", r."model", m.metric, m.bucket, count(*)
  from "inference"."usage_record" r cross join lateral (values (0::smallint, ${bucket('r."latency_ms"')}), (1::smallint, ${bucket('r."time_to_first_token_ms"')})) as m(metric, bucket)
  where r."status" < 400 and m.bucket is not null
  group by 1, 2, 3, 4, 5;`);
    }
  }
}
