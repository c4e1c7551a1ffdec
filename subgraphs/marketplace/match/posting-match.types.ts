import { Field, ObjectType } from '../../shared/type-graphql.js';
import { MatchExplanationType } from '../../shared/match.types.js';
import { JobPosting } from '../job/job-posting.entity.js';

/** One open posting ranked for a member. */
@ObjectType({ description: 'An open job posting ranked for a member, with the score explained.' })
export class PostingMatch extends MatchExplanationType {
  @Field(() => JobPosting)
  posting!: JobPosting;
}

/** Open postings ranked for a member, best first. */
@ObjectType()
export class PostingMatchPage {
  @Field(() => [PostingMatch])
  data!: PostingMatch[];

  @Field(() => Boolean)
  hasMore!: boolean;

  @Field(() => String, { nullable: true })
  nextCursor!: string | null;
}
