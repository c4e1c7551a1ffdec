import { Field, ObjectType } from '../../shared/type-graphql.js';
import { PageOf } from '../../shared/page.type.js';
import { MatchExplanationType } from '../../shared/match.types.js';
import { JobPosting } from '../job/job-posting.entity.js';
import { JobPostingSummary } from './job-posting-summary.js';

/** One open posting ranked for a member. */
@ObjectType({ description: 'An open job posting ranked for a member, with the score explained.' })
export class PostingMatch extends MatchExplanationType {
  @Field(() => JobPosting, { description: 'The whole posting (GraphQL; the REST view shows job).' })
  posting!: JobPosting;

  @Field(() => JobPostingSummary, { description: 'The posting at a glance.' })
  job!: JobPostingSummary;
}

/** Open postings ranked for a member, best first. */
@ObjectType()
export class PostingMatchPage extends PageOf(PostingMatch) {}
