import { Migration } from '@mikro-orm/migrations';

/**
 * The searches RIPE Atlas users make: by measurement, probe, address family, protocol and target
 * AS (a btree each, leading the keyset order like the other filters), and "passes through" an
 * address or an AS, answered by GIN indexes on two arrays kept on the row: every address that
 * answered in time and their ASNs. Cities are matched whatever their case (indexes on lower()).
 * Stored rows get their arrays from their hops, and IPv6 target addresses one spelling.
 */
export class Migration20261129000100SearchFilters extends Migration {
  override up(): void {
    this.addSql(`alter table "traceroute"."trace" add column "hop_ips" inet[] null, add column "hop_asns" int[] null;`);
    // Hops stored before responders were recorded have only their main address.
    this.addSql(`update "traceroute"."trace" t set
      "hop_ips" = coalesce((select array_agg(distinct (r->>'ip')::inet) from jsonb_array_elements(t.hops) h,
        jsonb_array_elements(coalesce(h->'responders', case when h->>'ip' is null then '[]'::jsonb else jsonb_build_array(h) end)) r), '{}'),
      "hop_asns" = coalesce((select array_agg(distinct (r->>'asn')::int) from jsonb_array_elements(t.hops) h,
        jsonb_array_elements(coalesce(h->'responders', case when h->>'ip' is null then '[]'::jsonb else jsonb_build_array(h) end)) r
        where r->>'asn' is not null), '{}');`);
    this.addSql(`alter table "traceroute"."trace" alter column "hop_ips" set not null, alter column "hop_asns" set not null;`);
    this.addSql(`update "traceroute"."trace" set "target_ip" = host("target_ip"::inet) where "target_ip" like '%:%' and "target_ip" <> host("target_ip"::inet);`);
    for (const column of ['msm_id', 'probe_id', 'af', 'protocol', 'target_asn']) {
      this.addSql(`create index "trace_${column}_index" on "traceroute"."trace" ("${column}", "measured_at" DESC, "id" DESC);`);
    }
    this.addSql(`drop index "traceroute"."trace_probe_city_index";`);
    this.addSql(`drop index "traceroute"."trace_target_city_index";`);
    this.addSql(`create index "trace_probe_city_lower_index" on "traceroute"."trace" (lower("probe_city"), "measured_at" desc, "id" desc);`);
    this.addSql(`create index "trace_target_city_lower_index" on "traceroute"."trace" (lower("target_city"), "measured_at" desc, "id" desc);`);
    this.addSql(`create index "trace_hop_ips_index" on "traceroute"."trace" using gin ("hop_ips");`);
    this.addSql(`create index "trace_hop_asns_index" on "traceroute"."trace" using gin ("hop_asns");`);
  }
}
