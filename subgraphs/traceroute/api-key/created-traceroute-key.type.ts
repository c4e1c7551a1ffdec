import { Field, ObjectType } from '../../shared/type-graphql.js';
import { TracerouteKeyType } from './traceroute-key.type.js';

/** A traceroute key just issued: the only time its secret is shown. */
@ObjectType('CreatedTracerouteKey')
export class CreatedTracerouteKeyType extends TracerouteKeyType {
  @Field(() => String, { description: 'Shown once; only its hash is stored.' })
  secret!: string;
}
