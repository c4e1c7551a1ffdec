import { Migration } from '@mikro-orm/migrations';

/** The advisory lock of the edge process running a claim: a retry takes over at once a claim whose process is gone. */
export class Migration20261128160000IdempotencyOwners extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."idempotency_record" add column "owner_lock" int null;`);
  }
}
