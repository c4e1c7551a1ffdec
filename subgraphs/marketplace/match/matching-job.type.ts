import { Directive, Field, ID, ObjectType } from '../../shared/type-graphql.js';
import { JobPosting } from '../job/job-posting.entity.js';

/**
 * A job posting as job matching sees it: the fields membership @requires to rank members for it.
 * A type of its own, so that posting lists over REST do not rank members for every row.
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
  title!: string;

  @Field(() => String)
  description!: string;

  @Field(() => [String])
  skills!: string[];

  @Field(() => String, { nullable: true })
  location!: string | null;

  @Field(() => Boolean)
  remote!: boolean;

  @Field(() => JobPosting)
  posting!: JobPosting;
}

/** The matching view of a posting. */
export function matchingJobOf(posting: JobPosting, page: string): MatchingJobType {
  return { id: posting.id, page, title: posting.title, description: posting.description, skills: posting.skills, location: posting.location ?? null, remote: posting.remote, posting };
}
