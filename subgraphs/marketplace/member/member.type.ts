import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';

/** The membership subgraph's Member, referenced by id; its fields are resolved there. */
@ObjectType('Member')
@Directive('@key(fields: "id", resolvable: false)')
export class MemberType {
  @Field(() => ID)
  id!: string;
}
