import { Migration } from '@mikro-orm/migrations';

/**
 * One counter of what the chat's per-event checks read (message-event-checks.ts): a member's
 * archival and scope, and who is in which channel. Triggers bump it in the transaction of every
 * such change, however it is written (the ORM, plain SQL, a cascade, a truncate), so a check
 * that reads the counter unchanged knows that state it read earlier is still current.
 *
 * Statement-level, so a bulk change bumps once. Inserting a member does not bump it: the checks
 * never keep a member they did not find, so a new one is read when it first subscribes.
 */
export class Migration20261124210000ChatAccessVersion extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."chat_access_version" ("id" smallint not null check ("id" = 1), "version" bigint not null, primary key ("id"));`);
    this.addSql(`insert into "membership"."chat_access_version" ("id", "version") values (1, 0);`);
    this.addSql(`create function "membership"."chat_access_changed"() returns trigger language plpgsql as $$
begin
  update "membership"."chat_access_version" set "version" = "version" + 1 where "id" = 1;
  return null;
end
$$;`);
    this.addSql(`create trigger "member_chat_access_changed" after update of "deleted_at", "account_id", "mode" or delete or truncate on "membership"."member" for each statement execute function "membership"."chat_access_changed"();`);
    this.addSql(`create trigger "chat_channel_member_chat_access_changed" after insert or update or delete or truncate on "membership"."chat_channel_member" for each statement execute function "membership"."chat_access_changed"();`);
  }
}
