import { Migration } from '@mikro-orm/migrations';

/** A rotated webhook secret keeps signing beside the new one until it expires. */
export class Migration20261128170000WebhookSecretRotation extends Migration {
  override up(): void {
    this.addSql(`alter table "membership"."chat_webhook" add column "previous_secret" varchar(64) null, add column "previous_secret_expires_at" timestamptz null;`);
  }
}
