import { Migration } from '@mikro-orm/migrations';

/**
 * Traces that failed before any hop (RIPE Atlas "name resolution failed": no target address) are
 * measurements too: the target address becomes optional and the failure's text is kept. Both
 * changes on the partitioned parent reach every partition.
 */
export class Migration20261123000100FailedBeforeAnyHop extends Migration {
  override up(): void {
    this.addSql(`alter table "traceroute"."trace" alter column "target_ip" drop not null;`);
    this.addSql(`alter table "traceroute"."trace" add column "error" varchar(500) null;`);
  }
}
