import { Migration } from '@mikro-orm/migrations';

/**
 * Providers, with the three the AI inference specification describes: Service T, Service I and
 * Service I's keyless proxy. They are reference data, so the migration that creates the table
 * also fills it.
 */
export class Migration20261122000300Providers extends Migration {
  override up(): void {
    this.addSql(`create table "inference"."provider" ("id" varchar(64) not null, "name" varchar(200) not null, "kind" text not null, "base_rest_path" varchar(200) not null, "requires_key" boolean not null, "status" text not null default 'operational', "capabilities" text[] not null, primary key ("id"));`);
    this.addSql(`alter table "inference"."provider" add constraint "provider_kind_check" check ("kind" in ('text_and_vision', 'image_and_text'));`);
    this.addSql(`alter table "inference"."provider" add constraint "provider_status_check" check ("status" in ('operational', 'degraded', 'down'));`);
    this.addSql(`insert into "inference"."provider" ("id", "name", "kind", "base_rest_path", "requires_key", "capabilities") values
      ('service-t', 'Service T', 'text_and_vision', '/inference/text', true, array['chat', 'completion', 'tokenize', 'vision']),
      ('service-i', 'Service I', 'image_and_text', '/inference/image', true, array['chat', 'completion', 'tokenize', 'vision', 'txt2img', 'img2img', 'upscale']),
      ('service-i-proxy', 'Service I proxy', 'image_and_text', '/inference/proxy', false, array['chat', 'completion', 'tokenize', 'vision', 'txt2img', 'img2img', 'upscale']);`);
  }
}
