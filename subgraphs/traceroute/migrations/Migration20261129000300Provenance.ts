import { Migration } from '@mikro-orm/migrations';

/**
 * Where each enriched figure of a trace came from (the source's metadata, or a database and its
 * date). Traces stored before keep null: what their figures were read from was not recorded.
 */
export class Migration20261129000300Provenance extends Migration {
  override up(): void {
    this.addSql(`alter table "traceroute"."trace" add column "provenance" jsonb null;`);
  }
}
