import { Migration } from '@mikro-orm/migrations';

/**
 * Provider rows now mirror the inference configuration (written at start by ProviderStatusFeed)
 * instead of being seeded: the three rows of the specification's services go, and so do the
 * columns that described a provider as one REST service (kind, mount, key requirement). Which
 * interfaces a provider serves is the configuration's choice, so that is what a row records now.
 */
export class Migration20261123000500ConfiguredProviders extends Migration {
  override up(): void {
    this.addSql(`delete from "inference"."provider" where "id" in ('service-t', 'service-i', 'service-i-proxy');`);
    // Dropping "kind" drops its check constraint with it.
    this.addSql(`alter table "inference"."provider" drop column "kind", drop column "base_rest_path", drop column "requires_key";`);
    // The default only fills rows an operator may have added by hand; the next sync rewrites or removes them.
    this.addSql(`alter table "inference"."provider" add "interfaces" text[] not null default '{}';`);
    this.addSql(`alter table "inference"."provider" alter column "interfaces" drop default;`);
    this.addSql(`alter table "inference"."provider" add constraint "provider_interfaces_check" check ("interfaces" <@ array['service_t'::text, 'service_i'::text, 'proxy'::text, 'gateway'::text, 'graphql'::text]);`);
  }
}
