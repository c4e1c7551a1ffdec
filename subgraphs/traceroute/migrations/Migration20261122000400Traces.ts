import { Migration } from '@mikro-orm/migrations';

/** Traces, public and unscoped, indexed for newest-measured-first keyset pages. */
export class Migration20261122000400Traces extends Migration {
  override up(): void {
    this.addSql(`create table "traceroute"."trace" ("id" uuid not null, "direction" text not null, "probe_city" varchar(200) not null, "probe_country" char(2) not null, "probe_asn" int not null, "target_domain" varchar(253) null, "target_ip" varchar(45) not null, "target_city" varchar(200) null, "anomaly_score" double precision not null, "status" text not null, "measured_at" timestamptz(3) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "trace_measured_at_id_index" on "traceroute"."trace" ("measured_at" DESC, "id" DESC);`);
    this.addSql(`alter table "traceroute"."trace" add constraint "trace_anomaly_score_check" check ("anomaly_score"::numeric >= 0 and "anomaly_score"::numeric <= 1);`);
    this.addSql(`alter table "traceroute"."trace" add constraint "trace_direction_check" check ("direction" in ('outside_to_pk', 'pk_to_outside', 'cross_isp', 'within_isp'));`);
    this.addSql(`alter table "traceroute"."trace" add constraint "trace_status_check" check ("status" in ('completed', 'failed'));`);
  }
}
