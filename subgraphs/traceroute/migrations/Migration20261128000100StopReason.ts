import { Migration } from '@mikro-orm/migrations';

/**
 * Why each trace stopped (scamper's stop_reason; read from the result for RIPE Atlas). Traces
 * stored before keep null: their source records are not kept, so the reason cannot be recovered.
 * The per-hop responders and stray answers live in the `hops` jsonb and need no column.
 */
export class Migration20261128000100StopReason extends Migration {
  override up(): void {
    this.addSql(`alter table "traceroute"."trace" add column "stop_reason" text null;`);
    this.addSql(
      `alter table "traceroute"."trace" add constraint "trace_stop_reason_check" check ("stop_reason" in ('completed', 'unreach', 'icmp', 'loop', 'gaplimit', 'error', 'hoplimit', 'gss', 'halted', 'none'));`,
    );
  }
}
