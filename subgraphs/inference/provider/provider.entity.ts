import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import { UsageInterface } from '../usage/usage-interface.js';
import { ProviderStatus } from './provider-status.js';

/**
 * A provider of the inference configuration, as the subgraph last synced it (provider-status.feed.ts):
 * the configuration owns the set, the row exists so that other subgraphs can reference a provider
 * and subscribers can be told of status changes. Providers are platform-wide, so rows carry no
 * account or mode. In-flight requests, model counts and cooldowns change by the second and are
 * read live from the registry instead (provider.resolver.ts).
 */
@ObjectType({ description: 'An inference provider of the configuration.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'provider' })
export class Provider {
  /** The configuration's id, a slug: clients name providers in requests. */
  @Field(() => ID)
  @PrimaryKey({ type: 'string', length: 64 })
  id!: string;

  @Field(() => String)
  @Property({ type: 'string', length: 200 })
  name!: string;

  @Field(() => ProviderStatus, {
    description: "From the health probes of its engines; an admin's override (setProviderStatus) lasts until the probes next see it change.",
  })
  @Enum({ items: () => ProviderStatus, default: ProviderStatus.OPERATIONAL })
  status: Opt<ProviderStatus> = ProviderStatus.OPERATIONAL;

  @Field(() => [String], { description: 'What the provider can do: chat, completion, tokenize, vision, txt2img, ...' })
  @Property({ type: 'string[]' })
  capabilities: Opt<string[]> = [];

  @Field(() => [UsageInterface], { description: 'The interfaces the configuration routes to this provider; none leaves it unreachable.' })
  @Enum({ items: () => UsageInterface, array: true })
  interfaces: Opt<UsageInterface[]> = [];
}
