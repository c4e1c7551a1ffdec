import { Migration } from '@mikro-orm/migrations';

/** The nonces of signed internal calls already acted on, so a captured call cannot be replayed within its five minutes. */
export class Migration20261124000000InternalNonces extends Migration {
  override up(): void {
    this.addSql(`create table "identity"."internal_nonce" ("nonce" varchar(64) not null, "seen_at" timestamptz not null, primary key ("nonce"));`);
    this.addSql(`create index "internal_nonce_seen_at_index" on "identity"."internal_nonce" ("seen_at");`);
  }
}
