import { Migration } from '@mikro-orm/migrations';

/**
 * Documents: their metadata and processing state (the durable queue is the `document` rows
 * themselves), the extracted content apart from the metadata so lists never read text, staged
 * uploads, and the bytes as 256 KiB chunks.
 */
export class Migration20261123003000Documents extends Migration {
  override up(): void {
    this.addSql(`create table "membership"."document_blob" ("id" uuid not null, "size_bytes" int not null, "sha256" char(64) not null, "chunk_count" int not null, "created_at" timestamptz not null default now(), primary key ("id"));`);
    this.addSql(`create table "membership"."document_blob_chunk" ("blob_id" uuid not null, "seq" int not null, "data" bytea not null, primary key ("blob_id", "seq"));`);
    this.addSql(`alter table "membership"."document_blob_chunk" add constraint "document_blob_chunk_blob_id_foreign" foreign key ("blob_id") references "membership"."document_blob" ("id") on delete cascade;`);
    // Files are mostly compressed already (PDF streams, DOCX zips, images): pglz would spend CPU for nothing.
    this.addSql(`alter table "membership"."document_blob_chunk" alter column "data" set storage external;`);
    this.addSql(`create table "membership"."document_upload" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "key_id" varchar(100) not null, "blob_id" uuid null, "filename" varchar(255) null, "mime_type" varchar(100) null, "extension" varchar(10) null, "size_bytes" int null, "sha256" char(64) null, "created_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "document_upload_expires_index" on "membership"."document_upload" ("expires_at");`);
    this.addSql(`create table "membership"."document" ("id" uuid not null, "account_id" uuid not null, "mode" varchar(4) not null, "key_id" varchar(100) not null, "member_id" uuid null, "filename" varchar(255) not null, "title" varchar(300) null, "mime_type" varchar(100) not null, "extension" varchar(10) not null, "size_bytes" int not null, "sha256" char(64) not null, "blob_id" uuid not null, "tags" text[] not null default '{}', "status" varchar(10) not null default 'pending', "failure_reason" varchar(20) null, "failure_detail" varchar(500) null, "attempts" int not null default 0, "next_attempt_at" timestamptz null, "locked_until" timestamptz null, "lease" uuid null, "page_count" int null, "language" varchar(10) null, "extraction_method" varchar(12) null, "extraction_confidence" real null, "category" varchar(100) null, "category_source" varchar(10) null, "classification" jsonb null, "categories_version" int null, "search" tsvector null, "created_at" timestamptz not null, "processed_at" timestamptz null, "deleted_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "document_scope_created_index" on "membership"."document" ("account_id", "mode", "created_at", "id");`);
    this.addSql(`create index "document_scope_sha256_index" on "membership"."document" ("account_id", "mode", "sha256");`);
    this.addSql(`create index "document_due_index" on "membership"."document" ("next_attempt_at") where "status" in ('pending', 'processing');`);
    this.addSql(`create index "document_trash_index" on "membership"."document" ("deleted_at") where "deleted_at" is not null;`);
    this.addSql(`create index "document_search_index" on "membership"."document" using gin ("search");`);
    this.addSql(`create table "membership"."document_content" ("document_id" uuid not null, "text" text not null, "pages" jsonb not null, "key_fields" jsonb not null, primary key ("document_id"));`);
    this.addSql(`alter table "membership"."document_content" add constraint "document_content_document_id_foreign" foreign key ("document_id") references "membership"."document" ("id") on update cascade on delete cascade;`);
    // A label changed: the account's classifier is trained again by the worker, once per burst of changes.
    this.addSql(`create table "membership"."document_training_request" ("account_id" uuid not null, "mode" varchar(4) not null, "requested_at" timestamptz not null, primary key ("account_id", "mode"));`);
  }
}
