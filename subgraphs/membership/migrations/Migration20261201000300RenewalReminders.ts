import { Migration } from '@mikro-orm/migrations';

/** Renewal reminders: the period end a member was reminded of, and the clock's index of current members by period end. */
export class Migration20261201000300RenewalReminders extends Migration {
  override up(): void {
    this.addSql(`alter table "membership"."member" add column "renewal_reminded_for" date null;`);
    this.addSql(`create index "member_current_period_end_index" on "membership"."member" ("period_end") where "state" = 'current' and "deleted_at" is null;`);
  }
}
