import { Migration } from '@mikro-orm/migrations';

/** Per-key request limits (traceroute keys). */
export class Migration20261122010000KeyLimits extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."api_key" add column "hourly_limit" int null, add column "daily_limit" int null;`);
  }
}
