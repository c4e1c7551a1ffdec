import { Migration } from '@mikro-orm/migrations';

/** Kept Responses API answers (responses/stored-response.entity.ts). */
export class Migration20261129000100StoredResponses extends Migration {
  override up(): void {
    this.addSql(
      `create table "inference"."stored_response" ("id" varchar(64) not null, "scope" varchar(64) not null, "response" json not null, "input_items" json null, "previous_response_id" varchar(64) null, "item_ids" text[] not null, "created_at" timestamptz(6) not null, "expires_at" timestamptz(6) not null, primary key ("id"));`,
    );
    this.addSql(`create index "stored_response_expires_index" on "inference"."stored_response" ("expires_at");`);
    this.addSql(`create index "stored_response_item_ids_index" on "inference"."stored_response" using gin ("item_ids");`);
  }
}
