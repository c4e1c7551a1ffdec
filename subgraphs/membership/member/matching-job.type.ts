import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';

/**
 * The marketplace's MatchingJob (a job posting's matching fields) as membership knows it: its id and, through @requires, the fields
 * the ranking of members needs. Membership ranks its own members for it (candidateMatches); it
 * never reads the marketplace's tables.
 */
@ObjectType('MatchingJob', { description: 'A job posting as job matching sees it.' })
@Directive('@key(fields: "id page")')
export class MatchingJobType {
  @Field(() => ID)
  id!: string;

  /**
   * The page of candidateMatches (see encodeMatchPage), part of the key: @inaccessible keeps it out of the
   * API schema (GraphQL and REST), so only the gateway's entity fetches carry it.
   */
  @Field(() => String)
  @Directive('@inaccessible')
  page!: string;

  @Field(() => String)
  @Directive('@external')
  title?: string;

  @Field(() => String)
  @Directive('@external')
  description?: string;

  @Field(() => [String])
  @Directive('@external')
  skills?: string[];

  @Field(() => String, { nullable: true })
  @Directive('@external')
  location?: string | null;

  @Field(() => Boolean)
  @Directive('@external')
  remote?: boolean;
}
