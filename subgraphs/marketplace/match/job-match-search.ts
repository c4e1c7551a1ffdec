import { Field, ObjectType } from '../../shared/type-graphql.js';
import { MatchingJobType } from './matching-job.type.js';
import { MatchingMemberType } from './matching-member.type.js';

/**
 * What `jobMatches` answers: the member (whose `jobMatches` the marketplace ranks, with its
 * profile fetched from membership by @requires) or the posting (whose `candidateMatches`
 * membership ranks, with the posting's fields fetched from here by @requires).
 */
@ObjectType({ description: 'The subject of a match search; the ranked list is its jobMatches or candidateMatches.' })
export class JobMatchSearch {
  @Field(() => MatchingMemberType, { nullable: true, description: 'Set when searching postings for a member; null when no such member is visible.' })
  member!: MatchingMemberType | null;

  @Field(() => MatchingJobType, { nullable: true, description: 'Set when searching members for a posting.' })
  job!: MatchingJobType | null;
}
