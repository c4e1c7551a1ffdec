import { Field, ID, Int, ObjectType, registerEnumType } from '../../shared/type-graphql.js';
import { DateTimeResolver } from '../../shared/scalars.js';

export enum TracerouteKeyState {
  ACTIVE = 'active',
  DISABLED = 'disabled',
  EXPIRED = 'expired',
}
registerEnumType(TracerouteKeyState, { name: 'TracerouteKeyState' });

/** A traceroute API key as the admin area shows it: never its secret. */
@ObjectType('TracerouteKey')
export class TracerouteKeyType {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'The account the key was issued to.' })
  account!: string;

  @Field(() => String, { nullable: true })
  name!: string | null;

  @Field(() => String)
  prefix!: string;

  @Field(() => Int)
  hourlyLimit!: number;

  @Field(() => Int)
  dailyLimit!: number;

  @Field(() => TracerouteKeyState)
  state!: TracerouteKeyState;

  @Field(() => DateTimeResolver)
  createdAt!: string;

  @Field(() => DateTimeResolver, { nullable: true })
  disabledAt!: string | null;

  @Field(() => DateTimeResolver, { nullable: true })
  expiresAt!: string | null;
}
