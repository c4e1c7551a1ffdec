import { Field, ID, ObjectType, registerEnumType } from '../../shared/type-graphql.js';
import { DateTimeResolver } from '../../shared/scalars.js';

export enum MembershipKeyKind {
  LIVE = 'live',
  TEST = 'test',
}
registerEnumType(MembershipKeyKind, { name: 'MembershipKeyKind' });

/** An API key as the account holder sees it under Settings, API Keys: never its secret. */
@ObjectType('ApiKey')
export class ApiKeyType {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  kind!: string;

  @Field(() => String, { nullable: true })
  name!: string | null;

  @Field(() => String, { description: 'The first characters of the secret, to recognise the key by.' })
  prefix!: string;

  @Field(() => Boolean)
  livemode!: boolean;

  @Field(() => DateTimeResolver)
  createdAt!: string;

  @Field(() => DateTimeResolver, { nullable: true })
  disabledAt!: string | null;

  @Field(() => DateTimeResolver, { nullable: true })
  expiresAt!: string | null;

  @Field(() => DateTimeResolver, { nullable: true, description: 'When the key last authenticated a request, to the minute; null when never.' })
  lastUsedAt!: string | null;
}
