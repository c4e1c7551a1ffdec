import { Migration } from '@mikro-orm/migrations';

/**
 * A counter per account and mode of what the chat's per-event checks read
 * (message-event-checks.ts): a member's archival and scope, and who is in which channel. Triggers
 * bump it in the transaction of every such change, however it is written (the ORM or plain SQL),
 * so a check that reads its scope's counter unchanged knows that the state it read earlier is
 * still current. One row per scope, so a change in one account never invalidates another's, and
 * only that scope's writers take turns on its row.
 *
 * Statement-level, with transition tables: a bulk change bumps each scope it touches once, in
 * scope order (two bulk changes lock the rows in the same order). Inserting a member does not
 * bump it: the checks never keep a member they did not find. A truncate bumps every scope that
 * had rows, before they go.
 *
 * The counter row of a scope stays locked from the bump to the commit, so two transactions of one
 * scope that each bump and then wait on the other would deadlock (PostgreSQL ends one); no path
 * of the platform does that: each bumps in one statement, near its end.
 */
export class Migration20261124210000ChatAccessVersion extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."chat_access_version" ("account_id" uuid not null, "mode" varchar(4) not null, "version" bigint not null, primary key ("account_id", "mode"));`);
    // Each function bumps the scopes of the rows its statement changed; `scopes` is filled per
    // branch. A scope's first row starts at the clock in microseconds, not at 1: a counter row
    // deleted then starts again above any value an instance may still
    // hold, so no kept row can be mistaken for current. Updates of a row's id are not expected
    // (nothing changes ids) and are not followed.
    const bump = (scopes: string) => `insert into "membership"."chat_access_version" ("account_id", "mode", "version")
      select "account_id", "mode", (extract(epoch from clock_timestamp()) * 1000000)::bigint from (${scopes}) "scopes" group by "account_id", "mode" order by "account_id", "mode"
      on conflict ("account_id", "mode") do update set "version" = "membership"."chat_access_version"."version" + 1;`;
    this.addSql(`create function "membership"."chat_access_members_changed"() returns trigger language plpgsql as $$
begin
  if TG_OP = 'TRUNCATE' then
    ${bump('select "account_id", "mode" from "membership"."member"')}
  elsif TG_OP = 'DELETE' then
    ${bump('select "account_id", "mode" from "old_rows"')}
  else
    -- An update: the scopes of members whose archival or scope changed, before and after.
    ${bump(`select o."account_id", o."mode" from "old_rows" o join "new_rows" n on n."id" = o."id"
        where (o."deleted_at", o."account_id", o."mode") is distinct from (n."deleted_at", n."account_id", n."mode")
      union all
      select n."account_id", n."mode" from "old_rows" o join "new_rows" n on n."id" = o."id"
        where (o."account_id", o."mode") is distinct from (n."account_id", n."mode")`)}
  end if;
  return null;
end
$$;`);
    // A membership's scope is its channel's and its member's (the same, as the chat service
    // checks); both are read, since the ORM may insert a new channel's memberships before the
    // channel itself in one flush.
    const scopesOf = (rows: string) => `select c."account_id", c."mode" from ${rows} r join "membership"."chat_channel" c on c."id" = r."channel_id"
      union all select m."account_id", m."mode" from ${rows} r join "membership"."member" m on m."id" = r."member_id"`;
    this.addSql(`create function "membership"."chat_access_channel_members_changed"() returns trigger language plpgsql as $$
begin
  if TG_OP = 'TRUNCATE' then
    ${bump(scopesOf('"membership"."chat_channel_member"'))}
  elsif TG_OP = 'INSERT' then
    ${bump(scopesOf('"new_rows"'))}
  elsif TG_OP = 'DELETE' then
    ${bump(scopesOf('"old_rows"'))}
  else
    -- An update: only a change of channel or member matters (not, say, joined_at).
    ${bump(scopesOf(`(select o."channel_id", o."member_id" from "old_rows" o join "new_rows" n on n."id" = o."id"
        where (o."channel_id", o."member_id") is distinct from (n."channel_id", n."member_id")
      union all select n."channel_id", n."member_id" from "old_rows" o join "new_rows" n on n."id" = o."id"
        where (o."channel_id", o."member_id") is distinct from (n."channel_id", n."member_id"))`))}
  end if;
  return null;
end
$$;`);
    for (const [table, fn, events] of [
      ['member', 'chat_access_members_changed', ['update', 'delete', 'truncate']],
      ['chat_channel_member', 'chat_access_channel_members_changed', ['insert', 'update', 'delete', 'truncate']],
    ] as const) {
      for (const event of events) {
        const name = `${table}_chat_access_${{ insert: 'inserted', update: 'updated', delete: 'deleted', truncate: 'truncated' }[event]}`;
        const referencing = { insert: 'referencing new table as "new_rows" ', update: 'referencing old table as "old_rows" new table as "new_rows" ', delete: 'referencing old table as "old_rows" ', truncate: '' }[event];
        this.addSql(`create trigger "${name}" ${event === 'truncate' ? 'before' : 'after'} ${event} on "membership"."${table}" ${referencing}for each statement execute function "membership"."${fn}"();`);
      }
    }
  }
}
