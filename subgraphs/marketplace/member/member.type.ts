import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';

/**
 * The membership subgraph's Member, as the marketplace knows it: by id, plus what the
 * marketplace adds to it (the member's job postings). Its other fields resolve in membership.
 */
@ObjectType('Member')
@Directive('@key(fields: "id")')
export class MemberType {
  @Field(() => ID)
  id!: string;
}
