import { Field, ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { MatchExplanationType } from '../../shared/match.types.js';
import { Member } from './member.entity.js';
import { CandidateSummary } from './candidate-summary.js';
import { MatchingJobType } from './matching-job.type.js';

/** One member ranked for a job posting. */
@ObjectType({ description: 'A member ranked for a job posting, with the score explained.' })
export class CandidateMatch extends MatchExplanationType {
  @Field(() => Member, { description: 'The whole member (GraphQL; the REST view shows candidate).' })
  member!: Member;

  @Field(() => CandidateSummary, { description: 'The member at a glance.' })
  candidate!: CandidateSummary;

  @Field(() => MatchingJobType, { description: 'The posting the member was ranked for.' })
  job!: Pick<MatchingJobType, 'id' | 'page'>;
}

/** Members ranked for a posting, best first. */
@ObjectType()
export class CandidateMatchPage extends PageOf(CandidateMatch) {}
