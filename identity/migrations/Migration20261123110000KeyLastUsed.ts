import { Migration } from '@mikro-orm/migrations';

/**
 * When a key was last used (Settings, API Keys), written by the edge at most once a minute per key.
 * That write is no change of the key: the change notice (Migration20261123005000KeyChanges) now
 * stays silent when last_used_at is the only column that moved, or every request would empty every
 * edge's key cache once a minute.
 */
export class Migration20261123110000KeyLastUsed extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."api_key" add column "last_used_at" timestamptz null;`);
    this.addSql(`create or replace function "identity"."api_key_changed"() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' and (to_jsonb(old) - 'last_used_at') = (to_jsonb(new) - 'last_used_at') then
    return null;
  end if;
  perform pg_notify('identity_api_key_changed', old."id");
  return null;
end $$;`);
  }
}
