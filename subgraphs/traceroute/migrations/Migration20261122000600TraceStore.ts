import { Migration } from '@mikro-orm/migrations';

/**
 * The trace store for tens of millions of traces. `trace` replaces the first, unpartitioned
 * table (it held no imported data yet): it is range-partitioned by month of `measured_at`,
 * carries every search filter as a column and its hops as jsonb, so a trace is one row, stored
 * whole or not at all. Partitioning is raw SQL (MikroORM leaves partitioning that the entity does
 * not declare alone); each index on the parent is created on every partition. Months get their
 * partition from the import (trace-partitions.ts); the default partition catches the rest.
 */
export class Migration20261122000600TraceStore extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists pg_trgm with schema public;`);
    this.addSql(`drop table if exists "traceroute"."trace";`);
    this.addSql(`create table "traceroute"."path_baseline" ("probe_key" varchar(80) not null, "target_ip" varchar(45) not null, "samples" int not null, "rtt_ms" double precision null, "as_path" text not null, "known_asns" text not null, "updated_at" timestamptz not null, primary key ("probe_key", "target_ip"));`);
    this.addSql(`create table "traceroute"."trace" ("id" uuid not null, "measured_at" timestamptz(3) not null, "measurement_key" varchar(160) not null, "source" text not null, "msm_id" int null, "probe_id" int null, "direction" text not null, "status" text not null, "af" smallint not null, "protocol" varchar(16) null, "probe_ip" varchar(45) null, "probe_city" varchar(200) null, "probe_country" char(2) null, "probe_asn" int null, "probe_as_name" varchar(200) null, "probe_lat" real null, "probe_lon" real null, "target_domain" varchar(253) null, "target_ip" varchar(45) not null, "target_city" varchar(200) null, "target_country" char(2) null, "target_asn" int null, "target_as_name" varchar(200) null, "target_lat" real null, "target_lon" real null, "hop_count" smallint not null, "responding_hops" smallint not null, "loss" real not null, "rtt_ms" real null, "as_path" int[] not null, "anomaly_score" real not null, "anomaly" jsonb not null, "hops" jsonb not null, "created_at" timestamptz not null, primary key ("id", "measured_at")) partition by range ("measured_at");`);
    this.addSql(`create index "trace_target_domain_trgm_index" on "traceroute"."trace" using gin ("target_domain" public.gin_trgm_ops);`);
    this.addSql(`create index "trace_anomaly_index" on "traceroute"."trace" ("anomaly_score" DESC, "measured_at" DESC);`);
    for (const column of ['target_city', 'target_ip', 'probe_asn', 'probe_city', 'probe_country', 'status', 'direction']) {
      this.addSql(`create index "trace_${column}_index" on "traceroute"."trace" ("${column}", "measured_at" DESC, "id" DESC);`);
    }
    this.addSql(`create index "trace_order_index" on "traceroute"."trace" ("measured_at" DESC, "id" DESC);`);
    this.addSql(`alter table "traceroute"."trace" add constraint "trace_measurement_key_measured_at_unique" unique ("measurement_key", "measured_at");`);
    this.addSql(`alter table "traceroute"."trace" add constraint "trace_loss_check" check ("loss"::numeric >= 0 and "loss"::numeric <= 1);`);
    this.addSql(`alter table "traceroute"."trace" add constraint "trace_anomaly_score_check" check ("anomaly_score"::numeric >= 0 and "anomaly_score"::numeric <= 1);`);
    this.addSql(`alter table "traceroute"."trace" add constraint "trace_source_check" check ("source" in ('ripe_atlas', 'scamper', 'synthetic'));`);
    this.addSql(`alter table "traceroute"."trace" add constraint "trace_direction_check" check ("direction" in ('outside_to_pk', 'pk_to_outside', 'cross_isp', 'within_isp'));`);
    this.addSql(`alter table "traceroute"."trace" add constraint "trace_status_check" check ("status" in ('completed', 'failed'));`);
    this.addSql(`create table "traceroute"."trace_default" partition of "traceroute"."trace" default;`);
  }
}
