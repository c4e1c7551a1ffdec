import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import { Member } from './member.entity.js';

/**
 * A member as job matching sees it: the profile fields the marketplace @requires to rank postings
 * for the member. A type of its own, so that member lists over REST do not rank for every row.
 */
@ObjectType('MatchingMember', { description: 'A member as job matching sees it.' })
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
  skills!: string[];

  @Field(() => String, { nullable: true })
  headline!: string | null;

  @Field(() => String, { nullable: true })
  location!: string | null;

  @Field(() => Member)
  member!: Member;
}
