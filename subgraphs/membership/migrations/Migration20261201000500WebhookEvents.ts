import { Migration } from '@mikro-orm/migrations';

/**
 * `member.lapsed` notices: the grace end each member was announced for, and the clock's index of
 * current members by grace end. Members lapsed already count as announced, so the first sweep
 * tells only of lapses from now on.
 */
export class Migration20261201000500WebhookEvents extends Migration {
  override up(): void {
    this.addSql(`alter table "membership"."member" add column "lapse_notified_for" date null;`);
    this.addSql(`create index "member_current_grace_end_index" on "membership"."member" ("grace_ends_on") where "state" = 'current' and "deleted_at" is null;`);
    this.addSql(`update "membership"."member" set "lapse_notified_for" = "grace_ends_on" where "state" = 'current' and "grace_ends_on" < current_date;`);
  }
}
