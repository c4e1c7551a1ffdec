import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes for the analytics over usage records (analytics/analytics.service.ts). A BRIN index on
 * `occurred_at`: rows arrive in time order, so a few kilobytes per month let a range that covers
 * part of a monthly partition read only that part's blocks, where a seq scan would read the whole
 * month. A partial b-tree by client address: the keyless gateway's callers page through their own
 * calls, and only keyless rows carry an address.
 */
export class Migration20261123000900UsageAnalytics extends Migration {
  override up(): void {
    this.addSql(`create index "usage_record_occurred_brin" on "inference"."usage_record" using brin ("occurred_at");`);
    this.addSql(`create index "usage_record_client_index" on "inference"."usage_record" ("client_address", "occurred_at", "id") where "client_address" is not null;`);
  }
}
