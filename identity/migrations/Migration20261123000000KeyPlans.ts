import { Migration } from '@mikro-orm/migrations';

/**
 * The inference plan a text or image key is issued on. Null (every key issued before plans, and
 * any key not given one) means the inference configuration's default plan at request time.
 */
export class Migration20261123000000KeyPlans extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."api_key" add column "plan" varchar(64) null;`);
  }
}
