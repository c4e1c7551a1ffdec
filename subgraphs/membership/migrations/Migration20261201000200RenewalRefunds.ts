import { Migration } from '@mikro-orm/migrations';

/** A paid renewal keeps the period it replaced, so a refund can take the renewal back. */
export class Migration20261201000200RenewalRefunds extends Migration {
  override up(): void {
    this.addSql(`alter table "membership"."invoice" add column "replaced_period_start" date null, add column "replaced_period_end" date null;`);
  }
}
