import { Migration } from '@mikro-orm/migrations';

/** Chat: channels and their members, messages (direct, channel, broadcast) and their revisions. */
export class Migration20261122040000Chat extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."chat_channel" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "name" varchar(80) not null, "description" varchar(500) null, "visibility" varchar(7) not null, "created_by_id" uuid not null, "created_at" timestamptz not null, "last_message_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "chat_channel_scope_created_index" on "membership"."chat_channel" ("account_id", "mode", "created_at", "id");`);
    this.addSql(`alter table "membership"."chat_channel" add constraint "chat_channel_scope_name_unique" unique ("account_id", "mode", "name");`);
    this.addSql(`create table "membership"."chat_channel_member" ("id" uuid not null, "channel_id" uuid not null, "member_id" uuid not null, "joined_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "chat_channel_member_member_index" on "membership"."chat_channel_member" ("member_id");`);
    this.addSql(`alter table "membership"."chat_channel_member" add constraint "chat_channel_member_unique" unique ("channel_id", "member_id");`);
    this.addSql(`create table "membership"."chat_message" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "kind" varchar(9) not null, "channel_id" uuid null, "sender_id" uuid not null, "recipient_id" uuid null, "conversation_key" varchar(73) null, "text" text null, "created_at" timestamptz not null, "edited_at" timestamptz null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "chat_message_scope_kind_index" on "membership"."chat_message" ("account_id", "mode", "kind", "created_at", "id");`);
    this.addSql(`create index "chat_message_conversation_index" on "membership"."chat_message" ("account_id", "mode", "conversation_key", "created_at", "id");`);
    this.addSql(`create index "chat_message_channel_index" on "membership"."chat_message" ("channel_id", "created_at", "id");`);
    this.addSql(`create table "membership"."chat_message_revision" ("id" uuid not null, "message_id" uuid not null, "member_id" uuid not null, "action" varchar(6) not null, "text" text not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "chat_message_revision_message_index" on "membership"."chat_message_revision" ("message_id", "created_at");`);
  }
}
