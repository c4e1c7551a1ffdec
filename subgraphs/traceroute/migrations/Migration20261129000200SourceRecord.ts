import { Migration } from '@mikro-orm/migrations';

/**
 * Each imported trace keeps its record exactly as the file had it (GET /traces/{id}/raw), so
 * nothing of the source is lost to the summary. Traces stored before keep null: their records
 * were not kept.
 */
export class Migration20261129000200SourceRecord extends Migration {
  override up(): void {
    this.addSql(`alter table "traceroute"."trace" add column "source_record" text null;`);
  }
}
