import { Migration } from '@mikro-orm/migrations';

/** A category's renewal window: how many days before the period end an active member may renew. */
export class Migration20261201000100RenewalWindow extends Migration {
  override up(): void {
    this.addSql(`alter table "membership"."member_category" add column "renewal_window_days" int not null default 30;`);
  }
}
