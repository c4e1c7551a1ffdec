import { Migration } from '@mikro-orm/migrations';

/**
 * Every change or deletion of an API key notifies `identity_api_key_changed` with the key's id,
 * whoever makes it (the edge, a subgraph, the command-line tool, an operator's SQL). NOTIFY is
 * transactional: it is delivered on commit, so a cache never forgets a key before the change is
 * visible (key-cache.ts).
 */
export class Migration20261123005000KeyChanges extends Migration {
  override up(): void {
    this.addSql(`create function "identity"."api_key_changed"() returns trigger language plpgsql as $$
begin
  perform pg_notify('identity_api_key_changed', old."id");
  return null;
end $$;`);
    this.addSql(`create trigger "api_key_changed" after update or delete on "identity"."api_key" for each row execute function "identity"."api_key_changed"();`);
  }
}
