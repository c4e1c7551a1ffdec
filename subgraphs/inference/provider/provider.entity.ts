import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import { ProviderKind } from './provider-kind.js';
import { ProviderStatus } from './provider-status.js';

/**
 * An inference provider the multi-provider gateway fronts. Providers are reference data of the
 * platform, not owned by any account, so rows carry no account or mode.
 */
@ObjectType({ description: 'An inference provider served by the platform.' })
@Directive('@key(fields: "id")')
@Entity({ tableName: 'provider' })
export class Provider {
  /** A stable slug rather than a uuid: clients name providers in requests and configuration. */
  @Field(() => ID)
  @PrimaryKey({ type: 'string', length: 64 })
  id!: string;

  @Field(() => String)
  @Property({ type: 'string', length: 200 })
  name!: string;

  @Field(() => ProviderKind)
  @Enum({ items: () => ProviderKind })
  kind!: ProviderKind;

  @Field(() => String, { description: 'The REST mount the provider is served under, e.g. /inference/text.' })
  @Property({ type: 'string', length: 200 })
  baseRestPath!: string;

  @Field(() => Boolean, { description: 'False for keyless interfaces such as the Service I proxy.' })
  @Property({ type: 'boolean' })
  requiresKey!: boolean;

  @Field(() => ProviderStatus)
  @Enum({ items: () => ProviderStatus, default: ProviderStatus.OPERATIONAL })
  status: Opt<ProviderStatus> = ProviderStatus.OPERATIONAL;

  @Field(() => [String], { description: 'What the provider can do: chat, completion, tokenize, vision, txt2img, ...' })
  @Property({ type: 'string[]' })
  capabilities: Opt<string[]> = [];
}
