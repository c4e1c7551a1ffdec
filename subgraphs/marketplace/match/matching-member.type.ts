import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';

/**
 * Membership's MatchingMember as the marketplace knows it: the member's id and, through
 * @requires, the profile fields the ranking of postings needs.
 */
@ObjectType('MatchingMember')
@Directive('@key(fields: "id page")')
export class MatchingMemberType {
  @Field(() => ID)
  id!: string;

  /**
   * The page of jobMatches (see encodeMatchPage), part of the key: @inaccessible keeps it out of the
   * API schema (GraphQL and REST), so only the gateway's entity fetches carry it.
   */
  @Field(() => String)
  @Directive('@inaccessible')
  page!: string;

  @Field(() => [String])
  @Directive('@external')
  skills?: string[];

  @Field(() => String, { nullable: true })
  @Directive('@external')
  headline?: string | null;

  @Field(() => String, { nullable: true })
  @Directive('@external')
  location?: string | null;
}
